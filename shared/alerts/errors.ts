/** The base of every alerting error, so a caller can catch the module's errors as one. */
export class AlertError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'AlertError';
  }
}
