/** A silence that cannot be stored: every problem, each naming its field and what is accepted. */
export class AlertSilenceInvalidError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid silence: ${problems.join('; ')}`);
    this.name = 'AlertSilenceInvalidError';
  }
}

/** The silences table could not be read or written. */
export class AlertSilenceStoreError extends Error {
  constructor(doing: string, cause: unknown) {
    super(`${doing}: ${cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause)}`, { cause });
    this.name = 'AlertSilenceStoreError';
  }
}
