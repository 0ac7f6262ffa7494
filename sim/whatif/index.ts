/**
 * What-if replay: a request-rate trace through candidate ScaledObjects on the twin's virtual clock, with the twin's
 * KEDA and HPA algorithms and a per-replica curve measured with its vLLM engine model.
 */
export { candidateFromScaledObject, type Candidate } from './candidate.js';
export { guideCandidate, reportCandidate, thresholdsCandidate } from './candidates.js';
export { traceFromRange } from './ampTrace.js';
export { renderWhatIfSvg } from './chart.js';
export {
  WhatIfAmpAnswerError,
  WhatIfCandidateInvalidError,
  WhatIfError,
  WhatIfInputInvalidError,
  WhatIfTraceInvalidError,
} from './errors.js';
export {
  measurePerformanceModel,
  performanceAt,
  type PerformanceModel,
  type PerformancePoint,
} from './performanceModel.js';
export { replay, type ReplayInput, type ReplayResult, type ReplaySeries } from './replay.js';
export { parseTraceCsv, traceFromSamples, type RateTrace } from './trace.js';
