import { describe, expect, it } from '@jest/globals';
import { applyMergePatch } from './mergePatch.js';

describe('Function: applyMergePatch', () => {
  // The examples of RFC 7386 appendix A.
  it.each([
    { case: 'replace a member', target: { a: 'b' }, patch: { a: 'c' }, want: { a: 'c' } },
    { case: 'add a member', target: { a: 'b' }, patch: { b: 'c' }, want: { a: 'b', b: 'c' } },
    { case: 'null removes', target: { a: 'b', b: 'c' }, patch: { a: null }, want: { b: 'c' } },
    { case: 'arrays are replaced', target: { a: ['b'] }, patch: { a: ['c', 'd'] }, want: { a: ['c', 'd'] } },
    { case: 'nested merge', target: { a: { b: 'c' } }, patch: { a: { b: 'd', c: null } }, want: { a: { b: 'd' } } },
    { case: 'an object replaces a scalar', target: { a: 'foo' }, patch: { a: { b: 'c' } }, want: { a: { b: 'c' } } },
    { case: 'a non-object patch replaces all', target: { a: 'foo' }, patch: ['c'], want: ['c'] },
    {
      case: 'null inside a new object is dropped',
      target: {},
      patch: { a: { bb: { ccc: null } } },
      want: { a: { bb: {} } },
    },
  ])('RFC 7386: $case', ({ target, patch, want }) => {
    // Act
    const result = applyMergePatch(target, patch);

    // Assess
    expect(result).toEqual(want);
  });

  it('leaves the target untouched', () => {
    // Prepare
    const target = { spec: { replicas: 1 } };

    // Act
    applyMergePatch(target, { spec: { replicas: 2 } });

    // Assess
    expect(target).toEqual({ spec: { replicas: 1 } });
  });
});
