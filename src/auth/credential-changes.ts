// Tells the authenticator that stored credentials changed (an API key
// disabled, enabled, rotated, deleted or given other scopes, a workspace
// archived), so the node that made the change stops honouring the old state at
// once; other nodes follow within CREDENTIAL_TTL_MS.
export class CredentialChanges {
  private readonly listeners: Array<() => void> = [];

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  changed(): void {
    for (const listener of this.listeners) listener();
  }
}
