// The runtime's read of workspace secrets for `{{secrets.NAME}}` templates in
// tool URLs and headers. src/secrets/workspace-secret-resolver.ts implements it
// over the workspace secret service, which records each use (`info.lastUsedAt`).

export interface SecretResolver {
  /**
   * The value of each named secret of the workspace; a per-session value (widget
   * sessions) takes precedence over the stored secret of the same name. Every
   * stored secret read has its `lastUsedAt` set. The values must never be logged
   * or put into an error, a result or an event.
   * @param sessionSecrets per-session values, by name
   * @throws FailedPreconditionError naming the first secret that does not exist or has no value (never a value)
   */
  secretValues(workspaceId: string, names: readonly string[], sessionSecrets?: Readonly<Record<string, string>>): Promise<Map<string, string>>;
}
