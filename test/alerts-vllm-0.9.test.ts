import { describeAlertsOnTwin } from './helpers/alertsOnTwin.js';

// The five alerts end to end on a twin with vLLM 0.9 metric names (the cases are in helpers/alertsOnTwin.ts; the
// other naming era runs in its own file, in parallel).
describeAlertsOnTwin('0.9');
