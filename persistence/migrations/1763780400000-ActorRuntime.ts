// The actor runtime's tables: cluster settings, membership, shard leases and
// fencing epochs, the event journal and snapshots, outbox, reminders, commands.
import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ActorRuntime1763780400000 implements MigrationInterface {
  name = 'ActorRuntime1763780400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE actor_cluster (
        id smallint CONSTRAINT pk_actor_cluster PRIMARY KEY CONSTRAINT ck_actor_cluster_single CHECK (id = 1),
        shard_count integer NOT NULL CONSTRAINT ck_actor_cluster_shard_count CHECK (shard_count > 0),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE actor_nodes (
        node_id text CONSTRAINT pk_actor_nodes PRIMARY KEY,
        started_at timestamptz NOT NULL DEFAULT now(),
        last_heartbeat_at timestamptz NOT NULL DEFAULT now(),
        shards integer[] NOT NULL DEFAULT '{}',
        active_actors integer NOT NULL DEFAULT 0
      )`);
    await queryRunner.query(`
      CREATE TABLE actor_shards (
        shard integer CONSTRAINT pk_actor_shards PRIMARY KEY,
        epoch bigint NOT NULL DEFAULT 0,
        owner_node_id text,
        acquired_at timestamptz
      )`);
    await queryRunner.query(`
      CREATE TABLE actor_journal (
        ordering bigserial CONSTRAINT pk_actor_journal PRIMARY KEY,
        persistence_key text NOT NULL,
        sequence_nr bigint NOT NULL,
        payload jsonb NOT NULL,
        tags text[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_actor_journal_key_sequence UNIQUE (persistence_key, sequence_nr)
      )`);
    await queryRunner.query(`
      CREATE TABLE actor_snapshots (
        persistence_key text CONSTRAINT pk_actor_snapshots PRIMARY KEY,
        sequence_nr bigint NOT NULL,
        payload jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE actor_outbox (
        id text CONSTRAINT pk_actor_outbox PRIMARY KEY,
        shard integer NOT NULL,
        subject text NOT NULL,
        payload jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        published_at timestamptz
      )`);
    await queryRunner.query(
      'CREATE INDEX ix_actor_outbox_unpublished ON actor_outbox (shard, id) WHERE published_at IS NULL',
    );
    await queryRunner.query(`
      CREATE TABLE actor_reminders (
        kind text NOT NULL,
        actor_id text NOT NULL,
        name text NOT NULL,
        shard integer NOT NULL,
        due_at timestamptz NOT NULL,
        payload jsonb NOT NULL DEFAULT 'null',
        CONSTRAINT pk_actor_reminders PRIMARY KEY (kind, actor_id, name)
      )`);
    await queryRunner.query('CREATE INDEX ix_actor_reminders_shard_due ON actor_reminders (shard, due_at)');
    await queryRunner.query(`
      CREATE TABLE actor_commands (
        id text CONSTRAINT pk_actor_commands PRIMARY KEY,
        shard integer NOT NULL,
        kind text NOT NULL,
        actor_id text NOT NULL,
        payload jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        processed_at timestamptz
      )`);
    await queryRunner.query(
      'CREATE INDEX ix_actor_commands_pending ON actor_commands (shard, kind, actor_id, id) WHERE processed_at IS NULL',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['actor_commands', 'actor_reminders', 'actor_outbox', 'actor_snapshots', 'actor_journal', 'actor_shards', 'actor_nodes', 'actor_cluster']) {
      await queryRunner.query(`DROP TABLE ${table}`);
    }
  }
}
