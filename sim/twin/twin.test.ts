import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { twinMetricsSource } from '../harness/index.js';
import { systemClock } from '../../shared/clock/index.js';
import { buildPrompt } from '../load/constantArrival.js';
import { replicaIdentity } from './identity.js';
import type { VllmVersion } from '../profile/profile.js';
import type { Twin } from './twin.js';
import { startVllmReplica } from '../vllm/server.js';
import {
  namesIn,
  parseTextExposition,
  parseValue,
  samplesNamed,
  type TextExposition,
} from '../../test/helpers/exposition.js';
import { connectError, httpRequest, postJson } from '../../test/helpers/http.js';
import { loadVllmReference, referenceBuckets, requestTokenBuckets } from '../../test/helpers/reference.js';
import { DEMO_SHAPE, demoProfile, eventually, isGone, startDemoTwin } from '../../test/helpers/twin.js';

// `vllm-pilot twin up --profile demo` serves what a real vLLM + DCGM + Prometheus world serves: vLLM's metric names,
// types, labels and buckets (checked against a hand-transcribed reference), the OpenAI API, scraped targets, and a
// state file; and it lets go of everything when stopped.

jest.setTimeout(120_000);

const reference = loadVllmReference();
const SCRAPE_JOBS = ['dcgm-exporter', 'kubelet-cadvisor', 'vllm'] as const;

let twin: Twin;
let scratch: string;
let stateFile: string;
/** Each replica's `/metrics`, read once after start. */
const scraped = new Map<string, TextExposition>();

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'twin-test-'));
  stateFile = join(scratch, 'twin-state.json');
  twin = await startDemoTwin({ vllmVersion: 'latest' }, stateFile);
  for (const replica of twin.state.replicas) {
    const answer = await httpRequest(replica.metricsUrl);
    scraped.set(replica.name, parseTextExposition(answer.text));
  }
});

afterAll(async () => {
  await twin?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

function everyReplica(): Array<[string, TextExposition]> {
  expect(scraped.size).toBe(twin.profile.replicas);
  return [...scraped.entries()];
}

/** The series names a family is exposed under: a histogram as `_bucket`/`_count`/`_sum`, others as itself. */
function seriesOf(name: string, type: string): string[] {
  return type === 'histogram' ? [`${name}_bucket`, `${name}_count`, `${name}_sum`] : [name];
}

describe('Fixture: vllm-reference-metrics.json', () => {
  it('holds each bucket family with as many bounds as the reference counts', () => {
    // Assess
    for (const [family, count] of Object.entries(reference.bucketCounts)) {
      expect({ family, bounds: reference.bucketFamilies[family]?.length }).toEqual({ family, bounds: count });
    }
  });

  it.each(
    reference.requestTokens.examples.map((example) => ({ case: `max_model_len ${example.maxModelLen}`, example })),
  )('computes the request_tokens family for $case as the reference lists it', ({ example }) => {
    // Act
    const buckets = requestTokenBuckets(example.maxModelLen);

    // Assess
    expect(buckets).toEqual(example.le);
  });
});

describe('Function: startTwin (demo profile, vLLM latest)', () => {
  describe("Replica /metrics against vLLM's reference", () => {
    const metricCases = reference.metrics.map((metric) => ({ case: metric.name, metric }));
    const histogramCases = metricCases.filter(({ metric }) => metric.type === 'histogram');

    it.each(metricCases)('exposes $case with the reference type and labels', ({ metric }) => {
      const baseLabels = metric.baseLabels ?? reference.baseLabels;
      for (const [pod, exposition] of everyReplica()) {
        // Assess: the family is typed as the reference says, under its exposed name.
        expect({ pod, type: exposition.types.get(metric.name) }).toEqual({ pod, type: metric.type });
        for (const series of seriesOf(metric.name, metric.type)) {
          const samples = samplesNamed(exposition, series);
          expect({ pod, series, present: samples.length > 0 }).toEqual({ pod, series, present: true });
          for (const sample of samples) {
            for (const label of baseLabels) expect(sample.labels).toHaveProperty([label]);
            for (const label of metric.withoutLabels ?? []) expect(sample.labels).not.toHaveProperty([label]);
            if (baseLabels.includes('model_name')) expect(sample.labels.model_name).toBe(twin.state.model);
            expect(sample.labels.engine).toBe('0');
          }
        }
        // Labelled families carry one series per value the reference lists (all pre-created), and no other.
        for (const [label, values] of Object.entries(metric.labelValues ?? {})) {
          const seen = samplesNamed(exposition, metric.name).map((sample) => sample.labels[label]);
          expect(seen.sort()).toEqual([...values].sort());
        }
      }
    });

    it.each(histogramCases)('gives $case exactly the reference le bounds, +Inf included', ({ metric }) => {
      // Prepare
      const expected = [...referenceBuckets(reference, metric, twin.profile.engine.maxModelLen), Infinity];

      for (const [pod, exposition] of everyReplica()) {
        // Act
        const le = samplesNamed(exposition, `${metric.name}_bucket`).map((sample) =>
          parseValue(sample.labels.le ?? ''),
        );

        // Assess
        expect({ pod, le }).toEqual({ pod, le: expected });
      }
    });

    it('renders le bounds as prometheus_client does: floats ("1.0", "0.3") and "+Inf"', () => {
      for (const [, exposition] of everyReplica()) {
        const le = exposition.samples.filter((s) => s.name.endsWith('_bucket')).map((s) => s.labels.le ?? '');

        // Assess
        expect(le.length).toBeGreaterThan(0);
        for (const text of le) expect(text).toMatch(/^(\d+\.\d+(e[+-]\d+)?|\+Inf)$/);
      }
    });

    it('exposes every counter with the _total suffix and never under its bare name', () => {
      // Prepare
      const counters = reference.metrics.filter((metric) => metric.type === 'counter');

      for (const [, exposition] of everyReplica()) {
        const names = namesIn(exposition);
        for (const counter of counters) {
          // Assess
          expect(counter.name).toMatch(/_total$/);
          expect(names).toContain(counter.name);
          expect(names).not.toContain(counter.name.replace(/_total$/, ''));
        }
      }
    });

    it('exposes none of the legacy names that vLLM removed after renaming them', () => {
      for (const [, exposition] of everyReplica()) {
        const names = namesIn(exposition);
        for (const { legacy, current } of reference.renamed) {
          // Assess
          expect(names).toContain(current);
          for (const name of [legacy, `${legacy}_bucket`]) expect(names).not.toContain(name);
        }
      }
    });

    it('exposes none of the series that need a feature the replica does not have', () => {
      for (const [, exposition] of everyReplica()) {
        const names = [...namesIn(exposition)];
        for (const { name } of reference.absentWithoutFeature) {
          // Assess
          expect(names.filter((seen) => seen === name || seen.startsWith(`${name}_`))).toEqual([]);
        }
      }
    });
  });

  describe('OpenAI-compatible API', () => {
    it('answers POST /v1/completions with a text_completion that used max_tokens (finish_reason "length")', async () => {
      // Prepare
      const replica = twin.state.replicas[0];
      const prompt = buildPrompt(DEMO_SHAPE.promptTokens);

      // Act
      const answer = await postJson(`${replica?.url}/v1/completions`, {
        model: twin.state.model,
        prompt,
        max_tokens: DEMO_SHAPE.maxTokens,
      });

      // Assess
      expect(answer.status).toBe(200);
      const body = JSON.parse(answer.text) as Record<string, unknown>;
      expect(body).toMatchObject({
        id: expect.stringMatching(/^cmpl-/),
        object: 'text_completion',
        model: twin.state.model,
        choices: [{ index: 0, text: expect.stringMatching(/\S/), finish_reason: 'length' }],
        usage: {
          prompt_tokens: DEMO_SHAPE.promptTokens,
          completion_tokens: DEMO_SHAPE.maxTokens,
          total_tokens: DEMO_SHAPE.promptTokens + DEMO_SHAPE.maxTokens,
        },
      });
    });

    it('streams the same completion as server-sent events, one chunk per token, ending with data: [DONE]', async () => {
      // Prepare
      const url = `${twin.state.replicas[0]?.url}/v1/completions`;
      const request = { model: twin.state.model, prompt: buildPrompt(DEMO_SHAPE.promptTokens), max_tokens: 8 };
      const whole = JSON.parse((await postJson(url, request)).text) as { choices: Array<{ text: string }> };

      // Act
      const answer = await postJson(url, { ...request, stream: true });

      // Assess
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toMatch(/^text\/event-stream/);
      const events = answer.text.split('\n\n').filter((event) => event !== '');
      expect(events.every((event) => event.startsWith('data: '))).toBe(true);
      expect(events.at(-1)).toBe('data: [DONE]');
      const chunks = events.slice(0, -1).map(
        (event) =>
          JSON.parse(event.slice('data: '.length)) as {
            object: string;
            model: string;
            choices: Array<{ text: string; finish_reason: string | null }>;
          },
      );
      expect(chunks).toHaveLength(8);
      expect(chunks.every((chunk) => chunk.object === 'text_completion' && chunk.model === twin.state.model)).toBe(
        true,
      );
      expect(chunks.map((chunk) => chunk.choices[0]?.finish_reason)).toEqual([...Array<null>(7).fill(null), 'length']);
      expect(chunks.map((chunk) => chunk.choices[0]?.text).join('')).toBe(whole.choices[0]?.text);
    });

    it('adds a usage chunk before [DONE] when stream_options.include_usage is set', async () => {
      // Act
      const answer = await postJson(`${twin.state.replicas[0]?.url}/v1/completions`, {
        model: twin.state.model,
        prompt: buildPrompt(DEMO_SHAPE.promptTokens),
        max_tokens: 4,
        stream: true,
        stream_options: { include_usage: true },
      });

      // Assess
      const events = answer.text.split('\n\n').filter((event) => event !== '');
      expect(events.at(-1)).toBe('data: [DONE]');
      expect(JSON.parse(events.at(-2)?.slice('data: '.length) ?? 'null')).toMatchObject({
        choices: [],
        usage: {
          prompt_tokens: DEMO_SHAPE.promptTokens,
          completion_tokens: 4,
          total_tokens: DEMO_SHAPE.promptTokens + 4,
        },
      });
    });

    it('lists the served model on GET /v1/models', async () => {
      for (const replica of twin.state.replicas) {
        // Act
        const answer = await httpRequest(`${replica.url}/v1/models`);

        // Assess
        expect(answer.status).toBe(200);
        expect(JSON.parse(answer.text)).toMatchObject({
          object: 'list',
          data: [{ id: twin.state.model, object: 'model', max_model_len: twin.profile.engine.maxModelLen }],
        });
      }
    });

    it('answers GET /health with 200 once the model is loaded', async () => {
      for (const replica of twin.state.replicas) {
        // Act
        const answer = await httpRequest(`${replica.url}/health`);

        // Assess
        expect(answer.status).toBe(200);
      }
    });
  });

  describe('Prometheus', () => {
    it('scrapes every target of the vllm, dcgm-exporter and kubelet-cadvisor jobs (up == 1), three per replica', async () => {
      // Prepare: the product's own AMP client, pointed at the twin's Prometheus.
      const source = twinMetricsSource(twin.state);

      // Act
      const up = await source.instant('up');

      // Assess
      expect(up).toHaveLength(SCRAPE_JOBS.length * twin.profile.replicas);
      expect(up.every((sample) => sample.value === 1)).toBe(true);
      for (const job of SCRAPE_JOBS) {
        expect({ job, targets: up.filter((sample) => sample.labels.job === job).length }).toEqual({
          job,
          targets: twin.profile.replicas,
        });
      }
      const vllmPods = up.filter((sample) => sample.labels.job === 'vllm').map((sample) => sample.labels.pod);
      expect(vllmPods.sort()).toEqual(twin.state.replicas.map((replica) => replica.name).sort());
    });
  });

  describe('State file', () => {
    it("holds the Prometheus URL, each replica's URLs and the CloudWatch endpoint, and they answer", async () => {
      // Act
      const state = JSON.parse(await readFile(stateFile, 'utf8')) as typeof twin.state;

      // Assess
      expect(state).toEqual(twin.state);
      expect(state.prometheusUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await httpRequest(`${state.prometheusUrl}/-/ready`)).status).toBe(200);
      expect(state.replicas).toHaveLength(twin.profile.replicas);
      for (const replica of state.replicas) {
        expect(replica).toMatchObject({
          name: expect.stringMatching(new RegExp(`^${twin.profile.deployment}-`)),
          url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
          metricsUrl: `${replica.url}/metrics`,
          dcgmMetricsUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/),
        });
        const dcgm = await httpRequest(replica.dcgmMetricsUrl);
        expect(dcgm.status).toBe(200);
        expect(dcgm.text).toContain(`UUID="${replica.gpuUuid}"`);
        expect(dcgm.text).toContain(`pod="${replica.name}"`);
      }
      expect(state.aws.cloudwatchEndpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await httpRequest(`${state.aws.cloudwatchEndpoint}/_twin/datums`)).status).toBe(200);
    });
  });

  describe('Method: stop', () => {
    it('closes every port the twin opened and ends the Prometheus process', async () => {
      // Prepare
      const urls = [
        twin.state.prometheusUrl,
        twin.state.aws.cloudwatchEndpoint,
        ...twin.state.replicas.flatMap((replica) => [replica.url, replica.dcgmMetricsUrl]),
      ];
      const { pid } = twin.prometheus;
      expect(await connectError(twin.state.prometheusUrl)).toBeUndefined();

      // Act
      await twin.stop();

      // Assess
      for (const url of urls) expect({ url, error: await connectError(url) }).toEqual({ url, error: 'ECONNREFUSED' });
      expect(await eventually(() => isGone(pid))).toBe(true);
      await expect(twin.stop()).resolves.toBeUndefined();
    });
  });
});

describe('Function: startVllmReplica (metric naming by vllmVersion)', () => {
  const KV = { legacy: 'vllm:gpu_cache_usage_perc', current: 'vllm:kv_cache_usage_perc' };
  const ITL = { legacy: 'vllm:time_per_output_token_seconds', current: 'vllm:inter_token_latency_seconds' };

  it.each<{ case: string; version: VllmVersion; present: string[]; absent: string[] }>([
    // 0.9: before the renames, only the old names.
    { case: '0.9', version: '0.9', present: [KV.legacy, ITL.legacy], absent: [KV.current, ITL.current] },
    // 0.11: deprecated names still shown next to the new ones.
    { case: '0.11', version: '0.11', present: [KV.legacy, KV.current, ITL.legacy, ITL.current], absent: [] },
    // latest: the old names are gone.
    { case: 'latest', version: 'latest', present: [KV.current, ITL.current], absent: [KV.legacy, ITL.legacy] },
  ])('vLLM $case exposes the KV-cache and inter-token names of that era', async ({ version, present, absent }) => {
    // Prepare: one replica without Prometheus, loaded at once.
    const base = await demoProfile({ vllmVersion: version });
    const profile = { ...base, startup: { ...base.startup, modelLoadSeconds: 0 } };
    const replica = await startVllmReplica({
      profile,
      identity: replicaIdentity(profile, 0, 'us-east-2'),
      clock: systemClock,
    });
    try {
      // Act
      const answer = await httpRequest(replica.metricsUrl);

      // Assess
      expect(answer.status).toBe(200);
      const exposition = parseTextExposition(answer.text);
      for (const name of present) {
        const type = name.endsWith('_seconds') ? 'histogram' : 'gauge';
        expect({ name, type: exposition.types.get(name) }).toEqual({ name, type });
        expect(samplesNamed(exposition, type === 'histogram' ? `${name}_bucket` : name).length).toBeGreaterThan(0);
      }
      const names = namesIn(exposition);
      for (const name of absent) {
        expect(names).not.toContain(name);
        expect(names).not.toContain(`${name}_bucket`);
      }
    } finally {
      await replica.stop();
    }
  });
});
