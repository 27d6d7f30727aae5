import { connect } from '@nats-io/transport-node';

describe('test servers', () => {
  it('exposes a reachable NATS server to the tests', async () => {
    const nc = await connect({ servers: process.env.TEST_NATS_URL });
    const rtt = await nc.rtt();
    expect(rtt).toBeGreaterThanOrEqual(0);
    await nc.close();
  });
});
