// The start-up lines of a node (src/startup-summary.ts): the database and bus
// named without their credentials, and the shard ranges of `agentrt cluster status`.
import assert from 'node:assert/strict';
import { describeBus, describeDatabase, startupLines, TOKEN_FILE_STATE } from '../../src/startup-summary';
import { shardRanges } from '../../src/sharding/shard-ranges';

describe('startupLines', () => {
  it('names the embedded database\'s folder and the in-process bus', () => {
    const lines = startupLines({
      embeddedDatabaseFolder: '/data/pgdata', tokenFile: '/data/global-api-key.token', tokenFileState: TOKEN_FILE_STATE.PRESENT,
    });
    assert.deepEqual(lines, [
      'database: embedded Postgres (PGlite) in /data/pgdata',
      'bus: in-process (this node on its own; DATABASE_URL and NATS_URL make a cluster)',
      "token: the first account's global API key token is in /data/global-api-key.token",
    ]);
  });

  it('says when there is no token file in the data folder', () => {
    const [, , token] = startupLines({ embeddedDatabaseFolder: '/d/pgdata', tokenFile: '/d/t', tokenFileState: TOKEN_FILE_STATE.ABSENT });
    assert.match(token, /^token: no token file at \/d\/t \(the first account was created elsewhere/);
    // Both causes: in a cluster, usually another node that wrote the file into its own data folder; else agentrt bootstrap.
    assert.match(token, /by another node of the cluster, which wrote the token file into its own data folder/);
    assert.match(token, /or by agentrt bootstrap, which printed the token/);
  });
});

describe('describeDatabase', () => {
  it('names the Postgres host and database, never the user\'s password', () => {
    const line = describeDatabase('postgres://agentrt:s3cret@db.internal:5433/agentrt_prod?sslmode=require', '/unused');
    assert.equal(line, 'database: Postgres at db.internal:5433, database agentrt_prod');
  });

  it('names a socket folder given after credentials with no host, a form pg accepts', () => {
    assert.equal(describeDatabase('postgresql://u:s3cret@/agentrt?host=/var/run/postgresql', '/unused'), 'database: Postgres at /var/run/postgresql, database agentrt');
  });

  it('names the host of a URL whose password holds a raw /, without the password', () => {
    const line = describeDatabase('postgres://agentrt:s3/cret@db.internal:5433/agentrt_prod', '/unused');
    assert.equal(line, 'database: Postgres at db.internal:5433, database agentrt_prod');
  });

  it('does not repeat a DATABASE_URL that is not a URL', () => {
    assert.equal(describeDatabase('host=db password=s3cret', '/unused'), 'database: Postgres at DATABASE_URL (not shown: it is not a URL)');
  });
});

describe('describeBus', () => {
  it('lists the NATS servers with their credentials replaced, with or without a scheme', () => {
    const line = describeBus('nats://user:p@ss@nats-1:4222,tok3n@nats-2:4222,nats://nats-3:4222');
    assert.equal(line, 'bus: NATS at nats://***@nats-1:4222, ***@nats-2:4222, nats://nats-3:4222');
  });
});

describe('shardRanges', () => {
  it('writes runs of consecutive shards as ranges, in order, each shard once', () => {
    assert.equal(shardRanges([9, 0, 1, 2, 3, 8, 2, 5]), '0-3,5,8-9');
    assert.equal(shardRanges(Array.from({ length: 256 }, (_, shard) => shard)), '0-255');
    assert.equal(shardRanges([]), '');
  });
});
