import { HttpStatus } from '@nestjs/common';
import type { HealthCheckResult } from '@nestjs/terminus';
import { ProblemException } from '../problems/problem.js';

// Readiness is re-checked by the orchestrator every few seconds; sooner is pointless.
const NOT_READY_RETRY_AFTER_SECONDS = 5;

export class NotReadyError extends ProblemException {
  constructor(checks: HealthCheckResult) {
    super(
      { slug: 'not-ready', title: 'Not ready', status: HttpStatus.SERVICE_UNAVAILABLE },
      'This instance cannot serve requests yet (see checks); send traffic to another instance.',
      { checks: checks.details },
      { 'Retry-After': String(NOT_READY_RETRY_AFTER_SECONDS) },
    );
  }
}
