import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { VirtualClock } from '../../shared/clock/index.js';
import { startSlackWebhookSink, type SlackWebhookSink } from './webhookSink.js';

const headerOf = (text: string) => ({ type: 'header', text: { type: 'plain_text', text } });

describe('Function: startSlackWebhookSink', () => {
  const clock = new VirtualClock(Date.parse('2026-03-02T10:00:00Z'));
  const lines: string[] = [];
  let sink: SlackWebhookSink;

  const post = (body: string, url = sink.url, contentType = 'application/json') =>
    fetch(url, { method: 'POST', headers: { 'content-type': contentType }, body });

  beforeAll(async () => {
    sink = await startSlackWebhookSink({ clock, log: (line) => lines.push(line) });
  });

  afterAll(async () => {
    await sink.stop();
  });

  beforeEach(() => {
    sink.clear();
    lines.length = 0;
  });

  it('has a webhook URL of Slack’s shape with a random token', async () => {
    // Prepare
    const other = await startSlackWebhookSink();
    await other.stop();

    // Assess
    expect(sink.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/services\/T0000\/B0000\/[0-9a-f]{24}$/);
    expect(new URL(other.url).pathname).not.toBe(new URL(sink.url).pathname);
  });

  it('accepts a JSON message with `ok` and records its body and arrival time', async () => {
    // Prepare
    const message = {
      text: 'VLLMKVCacheFull firing',
      attachments: [{ color: '#E01E5A', blocks: [headerOf('FIRING')] }],
    };

    // Act
    const response = await post(JSON.stringify(message));

    // Assess
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('ok');
    expect(sink.deliveries()).toEqual([{ receivedAtMs: clock.now(), body: message }]);
  });

  it('accepts the form encoding Slack also takes (payload=<json>)', async () => {
    // Act
    const response = await post(
      new URLSearchParams({ payload: JSON.stringify({ text: 'hello' }) }).toString(),
      sink.url,
      'application/x-www-form-urlencoded',
    );

    // Assess
    expect(response.status).toBe(200);
    expect(sink.deliveries().map((d) => d.body)).toEqual([{ text: 'hello' }]);
  });

  it.each([
    { case: 'another path', url: () => `${sink.url}x`, body: '{"text":"x"}', status: 404, code: 'no_service' },
    { case: 'a body that is not JSON', url: () => sink.url, body: '{"text":', status: 400, code: 'invalid_payload' },
    { case: 'a JSON array', url: () => sink.url, body: '[1]', status: 400, code: 'invalid_payload' },
    {
      case: 'a message with nothing to show',
      url: () => sink.url,
      body: '{"text":"","attachments":[]}',
      status: 400,
      code: 'missing_text_or_fallback_or_attachments',
    },
    {
      case: 'a header over 150 characters',
      url: () => sink.url,
      body: JSON.stringify({ text: 'x', blocks: [headerOf('h'.repeat(151))] }),
      status: 400,
      code: 'invalid_blocks',
    },
    {
      case: '51 blocks in an attachment',
      url: () => sink.url,
      body: JSON.stringify({
        text: 'x',
        attachments: [{ blocks: Array.from({ length: 51 }, () => ({ type: 'divider' })) }],
      }),
      status: 400,
      code: 'invalid_blocks',
    },
    {
      case: 'a section with 11 fields',
      url: () => sink.url,
      body: JSON.stringify({
        text: 'x',
        blocks: [{ type: 'section', fields: Array.from({ length: 11 }, () => ({ type: 'mrkdwn', text: 'f' })) }],
      }),
      status: 400,
      code: 'invalid_blocks',
    },
    {
      case: 'a button whose URL is not a URL',
      url: () => sink.url,
      body: JSON.stringify({
        text: 'x',
        blocks: [
          { type: 'actions', elements: [{ type: 'button', text: { type: 'plain_text', text: 'Go' }, url: 'nope' }] },
        ],
      }),
      status: 400,
      code: 'invalid_blocks',
    },
  ])('refuses $case with $status $code and records nothing', async ({ url, body, status, code }) => {
    // Act
    const response = await post(body, url());

    // Assess
    expect(response.status).toBe(status);
    expect(await response.text()).toBe(code);
    expect(sink.deliveries()).toEqual([]);
    expect(lines.at(-1)).toContain(`${status} ${code}`);
  });

  describe('Method: failNextRequests', () => {
    it('answers 429 rate_limited with Retry-After: 1 the given number of times, then accepts', async () => {
      // Prepare
      sink.failNextRequests(2, 429);

      // Act
      const answers = [];
      for (let i = 0; i < 3; i += 1) {
        const response = await post('{"text":"x"}');
        answers.push([response.status, await response.text(), response.headers.get('retry-after')]);
      }

      // Assess
      expect(answers).toEqual([
        [429, 'rate_limited', '1'],
        [429, 'rate_limited', '1'],
        [200, 'ok', null],
      ]);
      expect(sink.deliveries()).toHaveLength(1);
    });

    it('answers a 5xx with rollup_error, as Slack does for its own faults', async () => {
      // Prepare
      sink.failNextRequests(1, 503);

      // Act
      const response = await post('{"text":"x"}');

      // Assess
      expect([response.status, await response.text()]).toEqual([503, 'rollup_error']);
      expect(sink.deliveries()).toEqual([]);
    });

    it.each([
      { case: 'a 4xx other than 429', n: 1, status: 404 },
      { case: 'a negative count', n: -1, status: 500 },
    ])('refuses $case', ({ n, status }) => {
      // Act / Assess
      expect(() => sink.failNextRequests(n, status)).toThrow(RangeError);
    });
  });

  describe('Method: clear', () => {
    it('forgets deliveries and queued failures', async () => {
      // Prepare
      await post('{"text":"x"}');
      sink.failNextRequests(3, 500);

      // Act
      sink.clear();
      const response = await post('{"text":"y"}');

      // Assess
      expect(response.status).toBe(200);
      expect(sink.deliveries().map((d) => d.body)).toEqual([{ text: 'y' }]);
    });
  });
});

describe('Function: startSlackWebhookSink > stop', () => {
  it('releases the port, even with a keep-alive connection open', async () => {
    // Prepare
    const sink = await startSlackWebhookSink();
    await fetch(sink.url, { method: 'POST', body: '{"text":"x"}' });

    // Act
    await sink.stop();

    // Assess
    await expect(fetch(sink.url, { method: 'POST', body: '{"text":"x"}' })).rejects.toThrow(/fetch failed/);
  });
});
