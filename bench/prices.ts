/**
 * The one table of AWS prices the cost bench multiplies by (`npm run bench -- --only cost`, bench/bill.ts). Region
 * us-east-1, list prices before any free tier or savings plan. Each price names its source page and how it was
 * confirmed, on PRICES_AS_OF, from stored copies of public pages (the `search` tool; no live page was read):
 *
 * - `aws`: the figure is in the text of AWS's own pricing page;
 * - `third-party`: AWS's page text did not carry the figure (its price tables are drawn by script); the figure is from
 *   the named third-party page, which quotes AWS's us-east-1 price;
 * - `assumed`: no source found carried the figure; it is the price as remembered, to be checked on AWS's page.
 *
 * Prices change: check them, then change them here only.
 */

export const PRICES_AS_OF = '2026-12-03';
export const PRICE_REGION = 'us-east-1';

export const PRICE_STATUS = { aws: 'aws', thirdParty: 'third-party', assumed: 'assumed' } as const;
export type PriceStatus = (typeof PRICE_STATUS)[keyof typeof PRICE_STATUS];

/** One price: USD per `per` units of `unit`. */
export interface Price {
  usd: number;
  per: number;
  unit: string;
  status: PriceStatus;
  /** The page the figure was read from (for `assumed`, the page to check it on). */
  source: string;
}

const CLOUDWATCH = 'https://aws.amazon.com/cloudwatch/pricing/';
const LAMBDA = 'https://aws.amazon.com/lambda/pricing/';
const DYNAMODB = 'https://aws.amazon.com/dynamodb/pricing/on-demand/';
const SNS = 'https://aws.amazon.com/sns/pricing/';
const AMP = 'https://aws.amazon.com/prometheus/pricing/';

export const PRICES = {
  // CloudWatch custom metrics, per metric-month (prorated by the hour a metric receives data). The first two tiers are
  // quoted by the third-party page; the two lower tiers were not in any stored page.
  cloudWatchMetricsFirst10k: {
    usd: 0.3,
    per: 1,
    unit: 'metric-month (first 10,000)',
    status: 'third-party',
    source: 'https://cal53.calculator.city/cloudwatch-custom-metrics-calculator/ (quoting ' + CLOUDWATCH + ')',
  },
  cloudWatchMetricsNext240k: {
    usd: 0.1,
    per: 1,
    unit: 'metric-month (next 240,000)',
    status: 'third-party',
    source: 'https://cal53.calculator.city/cloudwatch-custom-metrics-calculator/ (quoting ' + CLOUDWATCH + ')',
  },
  cloudWatchMetricsNext750k: {
    usd: 0.05,
    per: 1,
    unit: 'metric-month (next 750,000)',
    status: 'assumed',
    source: CLOUDWATCH,
  },
  cloudWatchMetricsOver1m: {
    usd: 0.02,
    per: 1,
    unit: 'metric-month (over 1,000,000)',
    status: 'assumed',
    source: CLOUDWATCH,
  },
  // The stored pages quote $0.01 per 1,000 for GetMetricData only; PutMetricData's figure is assumed the same.
  cloudWatchPutMetricData: {
    usd: 0.01,
    per: 1_000,
    unit: 'PutMetricData requests',
    status: 'assumed',
    source: CLOUDWATCH,
  },
  lambdaRequests: {
    usd: 0.2,
    per: 1_000_000,
    unit: 'Lambda requests',
    status: 'third-party',
    source: 'https://cloudchipr.com/blog/aws-lambda-pricing (quoting ' + LAMBDA + ')',
  },
  // The stack runs on arm64 (serverless.yml provider.architecture); first 7.5 billion GB-s a month.
  lambdaArmGbSeconds: {
    usd: 0.0000133334,
    per: 1,
    unit: 'Lambda GB-second (arm64)',
    status: 'third-party',
    source: 'https://cloudchipr.com/blog/aws-lambda-pricing (quoting ' + LAMBDA + ')',
  },
  stepFunctionsTransitions: {
    usd: 0.025,
    per: 1_000,
    unit: 'Standard Workflow state transitions',
    status: 'aws',
    source: 'https://aws.amazon.com/step-functions/pricing/',
  },
  // After the November 2024 on-demand price cut.
  dynamoDbWrites: {
    usd: 0.625,
    per: 1_000_000,
    unit: 'DynamoDB on-demand write request units',
    status: 'third-party',
    source: 'https://airbyte.com/data-engineering-resources/dynamodb-pricing (quoting ' + DYNAMODB + ')',
  },
  dynamoDbReads: {
    usd: 0.125,
    per: 1_000_000,
    unit: 'DynamoDB on-demand read request units',
    status: 'third-party',
    source: 'https://airbyte.com/data-engineering-resources/dynamodb-pricing (quoting ' + DYNAMODB + ')',
  },
  snsPublishes: {
    usd: 0.5,
    per: 1_000_000,
    unit: 'SNS standard topic publishes',
    status: 'third-party',
    source: 'https://www.factualminds.com/blog/amazon-sns-pricing-publishes-fanout-protocols/ (quoting ' + SNS + ')',
  },
  // The stored AMP page carries the free tier (200 billion) but not the price table (shared/reference/amp-notes.md).
  ampQuerySamples: {
    usd: 0.1,
    per: 1_000_000_000,
    unit: 'AMP query samples processed',
    status: 'assumed',
    source: AMP,
  },
} as const satisfies Record<string, Price>;

export type PriceName = keyof typeof PRICES;

/** CloudWatch's custom-metric tiers, cheapest last: each holds metrics up to `upTo` (cumulative). */
export const CLOUDWATCH_METRIC_TIERS: ReadonlyArray<{ upTo: number; price: PriceName }> = [
  { upTo: 10_000, price: 'cloudWatchMetricsFirst10k' },
  { upTo: 250_000, price: 'cloudWatchMetricsNext240k' },
  { upTo: 1_000_000, price: 'cloudWatchMetricsNext750k' },
  { upTo: Infinity, price: 'cloudWatchMetricsOver1m' },
];

/** Free tiers per account and month, for the note under the table (shared with everything else in the account). */
export const FREE_TIERS = [
  { what: 'CloudWatch: 10 custom metrics, 1 million API requests', status: 'aws', source: CLOUDWATCH },
  { what: 'Lambda: 1 million requests, 400,000 GB-s', status: 'third-party', source: LAMBDA },
  {
    what: 'Step Functions: 4,000 state transitions',
    status: 'aws',
    source: 'https://aws.amazon.com/step-functions/pricing/',
  },
  { what: 'AMP: 200 billion query samples processed, 40 million samples ingested', status: 'aws', source: AMP },
] as const;
