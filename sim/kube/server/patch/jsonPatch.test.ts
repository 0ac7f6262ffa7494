import { describe, expect, it } from '@jest/globals';
import { KubeApiBadRequestError, KubeApiPatchNotApplicableError } from '../../errors.js';
import { applyJsonPatch, parseJsonPatch } from './jsonPatch.js';

const doc = () => ({
  metadata: { name: 'vllm', labels: { app: 'vllm', 'a/b': 'x' } },
  spec: { replicas: 1, args: ['--max-num-seqs', '256'] },
});

describe('Function: applyJsonPatch', () => {
  it.each([
    {
      case: 'add a member',
      ops: [{ op: 'add', path: '/spec/paused', value: true }],
      at: ['spec', 'paused'],
      want: true,
    },
    {
      case: 'add inserts into an array',
      ops: [{ op: 'add', path: '/spec/args/0', value: '--x' }],
      at: ['spec', 'args'],
      want: ['--x', '--max-num-seqs', '256'],
    },
    {
      case: 'add appends with -',
      ops: [{ op: 'add', path: '/spec/args/-', value: '--y' }],
      at: ['spec', 'args'],
      want: ['--max-num-seqs', '256', '--y'],
    },
    { case: 'replace', ops: [{ op: 'replace', path: '/spec/replicas', value: 3 }], at: ['spec', 'replicas'], want: 3 },
    { case: 'remove', ops: [{ op: 'remove', path: '/spec/args/1' }], at: ['spec', 'args'], want: ['--max-num-seqs'] },
    {
      case: 'move',
      ops: [{ op: 'move', from: '/spec/replicas', path: '/spec/count' }],
      at: ['spec'],
      want: { count: 1, args: ['--max-num-seqs', '256'] },
    },
    {
      case: 'copy',
      ops: [{ op: 'copy', from: '/metadata/name', path: '/spec/name' }],
      at: ['spec', 'name'],
      want: 'vllm',
    },
    {
      case: 'an escaped key (~1 is /)',
      ops: [{ op: 'replace', path: '/metadata/labels/a~1b', value: 'y' }],
      at: ['metadata', 'labels', 'a/b'],
      want: 'y',
    },
    {
      case: 'a passing test then a replace',
      ops: [
        { op: 'test', path: '/spec/replicas', value: 1 },
        { op: 'replace', path: '/spec/replicas', value: 2 },
      ],
      at: ['spec', 'replicas'],
      want: 2,
    },
  ])('applies $case', ({ ops, at, want }) => {
    // Act
    const result = applyJsonPatch(doc(), parseJsonPatch(ops));

    // Assess
    const value = at.reduce<unknown>((v, k) => (v as Record<string, unknown>)[k], result);
    expect(value).toEqual(want);
  });

  it.each([
    { case: 'a failed test', ops: [{ op: 'test', path: '/spec/replicas', value: 5 }], message: 'test failed' },
    {
      case: 'a missing parent',
      ops: [{ op: 'add', path: '/spec/missing/x', value: 1 }],
      message: 'doc is missing path: "/spec/missing/x"',
    },
    { case: 'replacing a missing member', ops: [{ op: 'replace', path: '/spec/nope', value: 1 }], message: 'missing' },
    { case: 'an index out of range', ops: [{ op: 'add', path: '/spec/args/9', value: 'x' }], message: 'out of bounds' },
    {
      case: 'moving into its own child',
      ops: [{ op: 'move', from: '/spec', path: '/spec/inner' }],
      message: 'is a child of',
    },
  ])('answers 422 for $case and changes nothing', ({ ops, message }) => {
    // Prepare
    const original = doc();

    // Act
    const act = () => applyJsonPatch(original, parseJsonPatch(ops));

    // Assess
    expect(act).toThrow(KubeApiPatchNotApplicableError);
    expect(act).toThrow(message);
    expect(original).toEqual(doc());
  });

  it('applies all operations or none (a later failure undoes earlier ones)', () => {
    // Prepare
    const original = doc();

    // Act
    const act = () =>
      applyJsonPatch(
        original,
        parseJsonPatch([
          { op: 'replace', path: '/spec/replicas', value: 9 },
          { op: 'test', path: '/metadata/name', value: 'other' },
        ]),
      );

    // Assess
    expect(act).toThrow(KubeApiPatchNotApplicableError);
    expect(original.spec.replicas).toBe(1);
  });
});

describe('Function: parseJsonPatch', () => {
  it.each([
    { case: 'an object instead of a list', body: { op: 'add' }, message: 'jsonpatch.Patch' },
    { case: 'an unknown op', body: [{ op: 'merge', path: '/a' }], message: 'op "merge" is not one of' },
    { case: 'no path', body: [{ op: 'remove' }], message: 'path must be a string' },
    { case: 'add without value', body: [{ op: 'add', path: '/a' }], message: 'value is required' },
    { case: 'move without from', body: [{ op: 'move', path: '/a' }], message: 'from must be a string' },
  ])('answers 400 for $case', ({ body, message }) => {
    // Act
    const act = () => parseJsonPatch(body);

    // Assess
    expect(act).toThrow(KubeApiBadRequestError);
    expect(act).toThrow(message);
  });
});
