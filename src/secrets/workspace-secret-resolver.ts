// SecretResolver over the workspace secret service: the one place the runtime
// turns secret names into values, so the service's rules apply unchanged
// (session values first, decryption bound to the row, `lastUsedAt` recorded).
import type { SecretResolver } from '../ports/secret-resolver';
import type { WorkspaceSecretService } from './workspace-secret.service';

export class WorkspaceSecretResolver implements SecretResolver {
  constructor(private readonly secrets: Pick<WorkspaceSecretService, 'resolveSecretTemplates'>) {}

  async secretValues(workspaceId: string, names: readonly string[], sessionSecrets: Readonly<Record<string, string>> = {}): Promise<Map<string, string>> {
    const values = new Map<string, string>();
    // One template per name: the service resolves a template whole, and a
    // value may contain any text, so names are never rendered side by side.
    for (const name of new Set(names)) {
      values.set(name, await this.secrets.resolveSecretTemplates(workspaceId, `{{secrets.${name}}}`, sessionSecrets));
    }
    return values;
  }
}
