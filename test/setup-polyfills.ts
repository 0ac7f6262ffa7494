import { ensurePromiseWithResolvers } from '../shared/workflow/promiseWithResolvers.js';

// Node 20 has no Promise.withResolvers; aws-local-stepfunctions needs it in every Task state.
ensurePromiseWithResolvers();
