// The pure parts of sharding: the FNV-1a hash (published test vectors), shard
// choice, fair shares and subject/address rules.
import assert from 'node:assert/strict';
import { InvalidArgumentError } from '../../src/errors';
import { actorAddress, actorSubject, persistenceKey, shardSubject } from '../../src/sharding/addressing';
import { fairShare } from '../../src/sharding/fair-share';
import { fnv1a32, shardOf } from '../../src/sharding/fnv1a32';

describe('fnv1a32', () => {
  it('matches the reference test vectors', () => {
    assert.equal(fnv1a32(''), 0x811c9dc5);
    assert.equal(fnv1a32('a'), 0xe40c292c);
    assert.equal(fnv1a32('foobar'), 0xbf9cf968);
  });

  it('hashes the UTF-8 bytes', () => {
    assert.equal(fnv1a32('é'), fnv1a32('\u00e9'));
    assert.notEqual(fnv1a32('é'), fnv1a32('e'));
  });

  it('spreads ids over the shards', () => {
    const counts = new Array(256).fill(0);
    for (let i = 0; i < 25_600; i++) counts[shardOf(`obj_${i}`, 256)]++;
    assert.ok(Math.min(...counts) > 50 && Math.max(...counts) < 160, `uneven: ${Math.min(...counts)}..${Math.max(...counts)}`);
  });
});

describe('fairShare', () => {
  it('gives floor(S/n), plus one to the first S mod n nodes in id order', () => {
    const nodes = ['node_c', 'node_a', 'node_b'];
    assert.deepEqual(nodes.map((node) => fairShare(256, nodes, node)), [85, 86, 85]);
    assert.equal(['node_a', 'node_b', 'node_c'].reduce((sum, node) => sum + fairShare(256, nodes, node), 0), 256);
  });

  it('gives nothing to a node outside the live set and ignores duplicates', () => {
    assert.equal(fairShare(10, ['a', 'b'], 'z'), 0);
    assert.equal(fairShare(10, ['a', 'a', 'b'], 'a'), 5);
  });
});

describe('actor addressing', () => {
  it('builds the subject agentrt.shard.<n>.<kind>.<id> and the shard wildcard', () => {
    const address = actorAddress('objective', 'obj_01J', 256);
    assert.equal(address.shard, shardOf('obj_01J', 256));
    assert.equal(actorSubject('agentrt', address), `agentrt.shard.${address.shard}.objective.obj_01J`);
    assert.equal(shardSubject('agentrt', 7), 'agentrt.shard.7.>');
    assert.equal(persistenceKey('objective', 'obj_01J'), 'objective:obj_01J');
  });

  it('refuses tokens that would break the subject', () => {
    assert.throws(() => actorAddress('objective', 'a.b', 256), (error: InvalidArgumentError) => error instanceof InvalidArgumentError && error.message === 'id: must match [A-Za-z0-9_:-]{1,200}');
    assert.throws(() => actorAddress('obj:ective', 'a', 256), (error: InvalidArgumentError) => error instanceof InvalidArgumentError && error.message === 'kind: must match [A-Za-z0-9_-]{1,64}');
    assert.throws(() => actorAddress('objective', '', 256), InvalidArgumentError);
    assert.throws(() => actorAddress('objective', 'a*', 256), InvalidArgumentError);
  });
});
