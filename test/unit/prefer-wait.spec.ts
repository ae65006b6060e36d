import { describe, expect, it } from '@jest/globals';
import { preferredWaitSeconds } from '../../src/http/prefer-wait.js';

/** RFC 7240 `Prefer` parsing, lenient as §2 asks: what is not understood is ignored, never an error. */
describe('preferredWaitSeconds', () => {
  it.each([
    [['wait=5'], 5],
    [['wait=0'], 0],
    [['WAIT = 7'], 7],
    [['wait="3"'], 3],
    [['respond-async, wait=10'], 10],
    [['return=minimal; foo="a,b", wait=4'], 4],
    [['wait=2;param=x'], 2],
    [['handling=lenient', 'wait=6'], 6],
  ])('%j → %s', (lines, seconds) => {
    expect(preferredWaitSeconds(lines)).toBe(seconds);
  });

  it.each([[undefined], [[]], [['respond-async']], [['wait']], [['wait=']], [['wait=soon']], [['wait=-1']], [['wait=1.5']], [['wait=99999999999']]])(
    '%j → no wait preference',
    (lines) => {
      expect(preferredWaitSeconds(lines)).toBeUndefined();
    },
  );

  it('only the first wait counts, even when it is unparsable', () => {
    expect(preferredWaitSeconds(['wait=3, wait=9'])).toBe(3);
    expect(preferredWaitSeconds(['wait=x', 'wait=9'])).toBeUndefined();
  });

  it('a comma inside a quoted parameter does not split preferences', () => {
    expect(preferredWaitSeconds(['foo="x, wait=1", wait=8'])).toBe(8);
  });
});
