import { Module } from '@nestjs/common';
import { Outbox } from './outbox.js';

/** The outbox alone (no HTTP): what every feature that declares events imports, the ops CLI included. */
@Module({
  providers: [Outbox],
  exports: [Outbox],
})
export class OutboxModule {}
