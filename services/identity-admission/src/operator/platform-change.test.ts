// The platform switch must be named explicitly: an empty or malformed message is never read as "off" or "on".
import { pino } from 'pino';
import { PlatformStateChange } from '#runtime/contracts/gen/rewards/v1/identity_pb.ts';
import { platformChange } from './endpoints.ts';

const logger = pino({ level: 'silent' });

describe('platformChange', () => {
  it('takes an explicit change that agrees with enabled', () => {
    expect(platformChange({ change: PlatformStateChange.ENABLE, enabled: true }, logger)).toBe(true);
    expect(platformChange({ change: PlatformStateChange.DISABLE, enabled: false }, logger)).toBe(false);
  });

  it.each([
    ['an empty message', { change: PlatformStateChange.UNSPECIFIED, enabled: false }],
    ['enabled without a change', { change: PlatformStateChange.UNSPECIFIED, enabled: true }],
    ['a change that contradicts enabled', { change: PlatformStateChange.DISABLE, enabled: true }],
    ['an unknown change', { change: 7 as PlatformStateChange, enabled: false }],
  ])('refuses %s with a 503 that changes nothing', (_what, request) => {
    expect(() => platformChange(request, logger)).toThrow(
      expect.objectContaining({ status: 503, code: 'PLATFORM_UNAVAILABLE' }),
    );
  });
});
