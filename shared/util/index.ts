/** Small helpers without a concept of their own. */
export { mapWithConcurrency } from './mapWithConcurrency.js';
export { mean, quantile } from './stats.js';
