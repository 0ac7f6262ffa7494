import { describe, expect, it } from '@jest/globals';
import type { AlertMessage } from '../alerts/index.js';
import {
  escapeMrkdwn,
  formatDuration,
  SLACK_COLORS,
  SLACK_LIMITS,
  slackMessageFor,
  truncate,
  type SlackBlock,
  type SlackPayload,
} from './blockKit.js';
import { kvCacheFiring, kvCacheResolved, queueDepthWarning } from './testing/alertMessages.js';

/** The blocks of the single attachment. */
function blocksOf(payload: SlackPayload): SlackBlock[] {
  expect(payload.attachments).toHaveLength(1);
  return payload.attachments[0]?.blocks ?? [];
}

/** Every text a reader sees, block by block, as `type: text` lines. */
function textsOf(payload: SlackPayload): string[] {
  return blocksOf(payload).flatMap((block) => {
    switch (block.type) {
      case 'header':
        return [`header: ${block.text.text}`];
      case 'section':
        return 'text' in block ? [`section: ${block.text.text}`] : block.fields.map((f) => `field: ${f.text}`);
      case 'context':
        return block.elements.map((e) => `context: ${e.text}`);
      case 'actions':
        return block.elements.map((e) => `button: ${e.text.text} -> ${e.url}`);
      case 'divider':
        return ['divider'];
    }
  });
}

describe('Function: slackMessageFor', () => {
  it('renders a critical firing alert in red with what, where, how bad, since when, and links', () => {
    // Act
    const payload = slackMessageFor(kvCacheFiring);

    // Assess
    expect(payload.attachments[0]?.color).toBe(SLACK_COLORS.criticalFiring);
    expect(payload.text).toBe(
      '🔴 FIRING: VLLMKVCacheFull (critical, target prod-mistral): KV cache 97.3 % full on pod vllm-inference-app-7d9c8b6f5d-x2k4q (model mistralai/Ministral-8B-Instruct-2410)',
    );
    expect(payload.attachments[0]?.fallback).toBe(payload.text);
    expect(textsOf(payload)).toEqual([
      'header: 🔴 FIRING: VLLMKVCacheFull',
      `section: *${kvCacheFiring.summary}*`,
      'field: *Target*\nprod-mistral',
      'field: *Severity*\ncritical',
      'field: *Value*\n97.3% (threshold 95%)',
      'field: *Started*\n<!date^1772445870^{date_short_pretty} {time_secs}|2026-03-02T10:04:30Z>',
      `section: ${kvCacheFiring.description}`,
      `section: *Runbook*\n${kvCacheFiring.runbook}`,
      'button: Runbook -> https://runbooks.example.com/vllm#vllmkvcachefull',
      'button: Dashboard -> https://grafana.example.com/d/vllm?var-pod=vllm-inference-app-7d9c8b6f5d-x2k4q',
      'context: cluster=prod-eks  ·  model_name=mistralai/Ministral-8B-Instruct-2410  ·  namespace=inference  ·  pod=vllm-inference-app-7d9c8b6f5d-x2k4q  ·  target=prod-mistral',
      'context: first notification  ·  fingerprint 9f2c1a7be04d3e18',
    ]);
  });

  it('renders the resolution in green with when it ended and how long it lasted, without the runbook steps', () => {
    // Act
    const payload = slackMessageFor(kvCacheResolved);

    // Assess
    expect(payload.attachments[0]?.color).toBe(SLACK_COLORS.resolved);
    expect(payload.text).toMatch(/^✅ RESOLVED: VLLMKVCacheFull \(critical, target prod-mistral\): /);
    const texts = textsOf(payload);
    expect(texts[0]).toBe('header: ✅ RESOLVED: VLLMKVCacheFull');
    expect(texts).toContain('field: *Last value*\n96.1% (threshold 95%)');
    expect(texts).toContain('field: *Ended*\n<!date^1772446620^{date_short_pretty} {time_secs}|2026-03-02T10:17:00Z>');
    expect(texts).toContain('field: *Duration*\n12m 30s');
    expect(texts.some((t) => t.includes('*Runbook*'))).toBe(false);
    expect(texts).toContain('context: resolved  ·  fingerprint 9f2c1a7be04d3e18');
  });

  it('renders a warning in amber, says it is a repeat, and leaves out the buttons when there are no links', () => {
    // Act
    const payload = slackMessageFor(queueDepthWarning);

    // Assess
    expect(payload.attachments[0]?.color).toBe(SLACK_COLORS.warningFiring);
    const texts = textsOf(payload);
    expect(texts[0]).toBe('header: 🟠 FIRING: VLLMHighQueueDepth');
    expect(texts).toContain('field: *Value*\n73 (threshold 50)');
    expect(texts).toContain('context: still firing (repeat notification)  ·  fingerprint 9f2c1a7be04d3e18');
    expect(blocksOf(payload).some((b) => b.type === 'actions')).toBe(false);
  });

  it('leaves out a link Slack would refuse as a button URL, keeping the other', () => {
    // Prepare
    const message: AlertMessage = {
      ...kvCacheFiring,
      runbookUrl: 'wiki/runbooks#kv',
      dashboardUrl: 'https://grafana.example.com/d/vllm',
    };

    // Act
    const texts = textsOf(slackMessageFor(message));

    // Assess
    expect(texts.filter((t) => t.startsWith('button:'))).toEqual([
      'button: Dashboard -> https://grafana.example.com/d/vllm',
    ]);
  });

  it('escapes &, < and > so a label cannot ping a channel or break the markup', () => {
    // Prepare
    const message: AlertMessage = {
      ...kvCacheFiring,
      target: 'a<b>&c',
      summary: 'Queue <!channel> & <@U123>',
      labels: { pod: '<https://evil.example|click>' },
    };

    // Act
    const payload = slackMessageFor(message);

    // Assess
    const texts = textsOf(payload);
    expect(texts).toContain('section: *Queue &lt;!channel&gt; &amp; &lt;@U123&gt;*');
    expect(texts).toContain('field: *Target*\na&lt;b&gt;&amp;c');
    expect(texts).toContain('context: pod=&lt;https://evil.example|click&gt;');
    expect(payload.text).toContain('target a&lt;b&gt;&amp;c): Queue &lt;!channel&gt;');
    expect(JSON.stringify(payload)).not.toMatch(/<!channel>|<@U123>/);
  });

  it('keeps every text within Slack’s limits when the alert texts are huge, ending cut texts with …', () => {
    // Prepare
    const huge = 'x'.repeat(10_000);
    const message: AlertMessage = {
      ...kvCacheFiring,
      target: huge,
      summary: huge,
      description: huge,
      runbook: huge,
      labels: Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`label_${i}`, huge.slice(0, 50)])),
    };

    // Act
    const payload = slackMessageFor(message);

    // Assess
    const blocks = blocksOf(payload);
    expect(blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocks);
    for (const block of blocks) {
      if (block.type === 'header') expect(block.text.text.length).toBeLessThanOrEqual(SLACK_LIMITS.headerText);
      if (block.type === 'section' && 'text' in block) {
        expect(block.text.text.length).toBeLessThanOrEqual(SLACK_LIMITS.sectionText);
        expect(block.text.text).toMatch(/…\*?$/);
      }
      if (block.type === 'section' && 'fields' in block) {
        expect(block.fields.length).toBeLessThanOrEqual(SLACK_LIMITS.sectionFields);
        for (const f of block.fields) expect(f.text.length).toBeLessThanOrEqual(SLACK_LIMITS.fieldText);
      }
      if (block.type === 'context')
        for (const e of block.elements) expect(e.text.length).toBeLessThanOrEqual(SLACK_LIMITS.contextText);
    }
    expect(payload.text.length).toBeLessThanOrEqual(SLACK_LIMITS.fallbackText);
    // The summary keeps its bold markers around the cut text.
    expect(textsOf(payload)[1]).toMatch(/^section: \*x+…\*$/);
  });
});

describe('Function: formatDuration', () => {
  it.each([
    { case: 'nothing', ms: 0, text: '0s' },
    { case: 'seconds', ms: 45_000, text: '45s' },
    { case: 'minutes and seconds', ms: 95_000, text: '1m 35s' },
    { case: 'whole minutes', ms: 120_000, text: '2m' },
    { case: 'hours and minutes, dropping seconds', ms: 7_385_000, text: '2h 3m' },
    { case: 'days and hours', ms: 93_600_000, text: '1d 2h' },
  ])('writes $case', ({ ms, text }) => {
    // Act / Assess
    expect(formatDuration(ms)).toBe(text);
  });
});

describe('Function: truncate', () => {
  it.each([
    { case: 'short text unchanged', text: 'abc', max: 3, out: 'abc' },
    { case: 'long text cut with …', text: 'abcdef', max: 4, out: 'abc…' },
    { case: 'never half an emoji', text: 'ab🔴cd', max: 4, out: 'ab…' },
    { case: 'never half an escape', text: escapeMrkdwn('ab&cd'), max: 5, out: 'ab…' },
  ])('keeps $case', ({ text, max, out }) => {
    // Act
    const cut = truncate(text, max);

    // Assess
    expect(cut).toBe(out);
    expect(cut.length).toBeLessThanOrEqual(max);
  });
});
