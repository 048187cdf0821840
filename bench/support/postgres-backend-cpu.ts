// CPU used by the Postgres backends serving one database, read from /proc: a
// benchmark on this machine shares two cores with its Postgres server, so
// the database's share of the cost is a figure of its own. Local server only.
import { readFileSync } from 'node:fs';
import { Client } from 'pg';

export interface BackendCpuMeter {
  /** CPU seconds the backends have used so far (those connected when the meter was made). */
  seconds(): number;
}

export async function postgresBackendCpu(databaseUrl: string): Promise<BackendCpuMeter> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  let pids: number[];
  try {
    const rows = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    pids = rows.rows.map((row) => row.pid);
  } finally {
    await client.end();
  }
  return {
    seconds() {
      let ticks = 0;
      for (const pid of pids) {
        try {
          // Fields after the command name: state is field 3, utime and stime are fields 14 and 15.
          const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
          ticks += Number(fields[11]) + Number(fields[12]);
        } catch {
          // The backend has gone.
        }
      }
      return ticks / 100; // USER_HZ
    },
  };
}
