import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../config/app-config.js';
import { createRequestLogger, REQUEST_LOGGER } from './request-logger.js';

@Module({
  providers: [
    {
      provide: REQUEST_LOGGER,
      inject: [ConfigService],
      useFactory: (config: ConfigService<AppConfig, true>) => createRequestLogger(config.get('log', { infer: true })),
    },
  ],
  exports: [REQUEST_LOGGER],
})
export class RequestLoggerModule {}
