// Which messages on a served subject a state owner answers: requests naming an inbox as their reply subject, never a
// reply steered onto the subject (no reply subject, or an error reply) nor a request naming a subject outside the
// inboxes (the state owner would publish its reply there as a command).
import { headers } from '@nats-io/transport-node';
import { requestRefusal } from './nats.ts';

describe('requestRefusal', () => {
  it('answers a request whose reply subject is an inbox', () => {
    expect(requestRefusal({ reply: '_INBOX.gateway.abc.1', headers: undefined })).toBeUndefined();
    expect(requestRefusal({ reply: '_INBOX.Xy12', headers: undefined })).toBeUndefined();
  });

  it.each([
    ['no reply subject (a reply steered here)', undefined],
    ['an empty reply subject', ''],
    ["another operation's subject", 'rewards.v1.identity.SetPlatformState'],
    ['a notice subject', 'rewards.v1.notices.membership'],
    ['the bare inbox prefix', '_INBOX.'],
    ['a wildcard', '_INBOX.gateway.>'],
    ['a lookalike', '_INBOXrewards.v1.identity.SetPlatformState'],
  ])('refuses %s', (_what, reply) => {
    expect(requestRefusal({ reply, headers: undefined })).toBe('reply_not_inbox');
  });

  it('refuses an error reply even when it names an inbox', () => {
    const h = headers();
    h.set('Nats-Service-Error', 'boom');
    h.set('Nats-Service-Error-Code', '400');
    expect(requestRefusal({ reply: '_INBOX.gateway.abc.1', headers: h })).toBe('not_a_request');
  });
});
