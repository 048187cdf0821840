// The lines a node logs once it listens, in words, for the person who started
// it: the database and the bus in use, where the first account's token is
// (where the API is, the `listening` line says). Addresses are shown without their credentials: a
// DATABASE_URL's password or a NATS_URL's user, password or token never appear.
import { credentialsRemoved, withoutCredentials } from './config';

/** Where the first account's global API key token is, as far as this node knows. */
export const TOKEN_FILE_STATE = {
  /** Written at this start (the first account was created now). */
  CREATED: 'created',
  /** Written at an earlier start. */
  PRESENT: 'present',
  /** Not in this node's data folder: another node (into its own data folder) or `agentrt bootstrap` created the first account. */
  ABSENT: 'absent',
} as const;
export type TokenFileState = (typeof TOKEN_FILE_STATE)[keyof typeof TOKEN_FILE_STATE];

export interface StartupFacts {
  /** DATABASE_URL; undefined for the embedded database. */
  databaseUrl?: string;
  /** Folder of the embedded database (read when databaseUrl is undefined). */
  embeddedDatabaseFolder: string;
  /** NATS servers, comma-separated; undefined for the in-process bus. */
  natsUrl?: string;
  tokenFile: string;
  tokenFileState: TokenFileState;
}

/**
 * The start-up lines, one sentence each. Where the API listens is not among them: the `listening` line just
 * before says it (`listening on http://…` in the pretty text), and saying it twice would only be noise.
 */
export function startupLines(facts: StartupFacts): string[] {
  return [
    describeDatabase(facts.databaseUrl, facts.embeddedDatabaseFolder),
    describeBus(facts.natsUrl),
    describeTokenFile(facts.tokenFile, facts.tokenFileState),
  ];
}

/** The database in use: the embedded one's folder, or the Postgres server and database (no user, no password). */
export function describeDatabase(databaseUrl: string | undefined, embeddedDatabaseFolder: string): string {
  if (!databaseUrl) return `database: embedded Postgres (PGlite) in ${embeddedDatabaseFolder}`;
  const address = postgresAddress(databaseUrl);
  return address ? `database: Postgres at ${address}` : 'database: Postgres at DATABASE_URL (not shown: it is not a URL)';
}

/** DATABASE_URL's server and database (`db:5432, database agentrt`), no user, no password; undefined when it is not a URL. */
export function postgresAddress(databaseUrl: string): string | undefined {
  let url: URL;
  try {
    // Parsed without its credentials: pg accepts forms URL does not, such as a socket folder and no host after them (`u:p@/db?host=/run/pg`).
    url = new URL(credentialsRemoved(databaseUrl));
  } catch {
    return undefined;
  }
  const host = url.host || url.searchParams.get('host') || 'localhost';
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  return `${host}${name ? `, database ${name}` : ''}`;
}

/** The bus in use: NATS with its servers (credentials replaced by `***`), or the in-process one. */
export function describeBus(natsUrl: string | undefined): string {
  if (!natsUrl) return 'bus: in-process (this node on its own; DATABASE_URL and NATS_URL make a cluster)';
  return `bus: NATS at ${natsUrl.split(',').map((server) => withoutCredentials(server.trim())).join(', ')}`;
}

function describeTokenFile(file: string, state: TokenFileState): string {
  switch (state) {
    case TOKEN_FILE_STATE.CREATED:
      return `token: the first account's global API key token is in ${file} (written now; send it as "Authorization: Bearer <token>")`;
    case TOKEN_FILE_STATE.PRESENT:
      return `token: the first account's global API key token is in ${file}`;
    case TOKEN_FILE_STATE.ABSENT:
      return `token: no token file at ${file} (the first account was created elsewhere: by another node of the cluster, which wrote the token file into its own data folder, or by agentrt bootstrap, which printed the token; or use an API key)`;
  }
}
