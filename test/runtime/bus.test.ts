// The Bus contract against both implementations: in-process and real NATS.
import { connect } from '@nats-io/transport-node';
import { MemoryBus, NatsBus } from '../../actors';
import { busContract } from '../support/cluster-bus.contract';
import { TEST_NATS_URL } from '../support/cluster-harness';

describe('MemoryBus', () => {
  busContract(async () => new MemoryBus());
});

describe('NatsBus', () => {
  busContract(async () => new NatsBus(await connect({ servers: TEST_NATS_URL })));
});
