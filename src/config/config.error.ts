/** Thrown for a bad environment; its message is the single line printed at start-up. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}
