import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { type ThrottlerStorageRecord, windowRecord } from './fixed-window.js';

// Ended windows are dropped once a minute, so that clients that went quiet cost no memory.
const SWEEP_INTERVAL_MS = 60_000;

interface Window {
  hits: number;
  readonly endsAt: number;
}

/** Fixed-window counters in this process (`REDIS_URL` unset): behind N replicas a client gets N × the limit. */
@Injectable()
export class MemoryThrottlerStorage implements ThrottlerStorage, OnApplicationShutdown {
  private readonly windows = new Map<string, Window>();
  private readonly sweep = setInterval(() => this.deleteEndedWindows(Date.now()), SWEEP_INTERVAL_MS).unref();

  async increment(key: string, ttl: number, limit: number, _blockDuration: number, throttlerName: string): Promise<ThrottlerStorageRecord> {
    const id = `${throttlerName}:${key}`;
    const now = Date.now();
    let window = this.windows.get(id);
    if (!window || window.endsAt <= now) {
      window = { hits: 0, endsAt: now + ttl };
      this.windows.set(id, window);
    }
    window.hits += 1;
    return windowRecord(window.hits, window.endsAt - now, limit);
  }

  onApplicationShutdown(): void {
    clearInterval(this.sweep);
  }

  private deleteEndedWindows(now: number): void {
    for (const [id, window] of this.windows) if (window.endsAt <= now) this.windows.delete(id);
  }
}
