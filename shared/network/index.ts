/**
 * Requests that get no answer: finding one in an error's causes, naming the host it went to and the time waited
 * (a private cluster whose functions lack a VPC endpoint or a security group rule shows up as exactly this).
 */
export {
  EndpointUnansweredError,
  NetworkError,
  NO_ANSWER_KINDS,
  type NoAnswerKind,
  describeNoAnswer,
  formatSeconds,
} from './errors.js';
export { findNoAnswer, type NoAnswer } from './noAnswer.js';
export { nameEndpointOnNoAnswer } from './sdkMiddleware.js';
