// The ModelProvider the objective actor's `model.call` effect calls: routes a
// request by its model id to builtin/scripted, to a workspace model's own
// provider key (its baseUrl, its upstream model id, its prices), or to
// OpenRouter for a catalog model, resolving and decrypting the key for that
// call only (it is never kept, logged or put in a result). Every call reads
// the model and the key from the database: a model added, changed or deleted
// on any node applies to the next call on every node.
import { FailedPreconditionError } from '../errors';
import type { ChatCallOptions, ChatModel, ChatRequest, ChatResponse, ModelProvider } from '../ports/model-provider';
import { modelFamily, SCRIPTED_MODEL_ID } from './catalog';
import { ModelCallError, ModelCallErrorType } from './model-call-error';
import type { CallRoute, OpenRouterClient, ProviderCallCredentials } from './openrouter-client';
import type { ModelRecord } from './records';
import { ScriptedChatModel } from './scripted-model';
import { isWorkspaceModel, pricesOf } from './workspace-model-spec';

/** Where a workspace's provider keys come from; AiProviderKeyService is one. */
export interface ProviderCredentialsSource {
  /** The key for the workspace's catalog models. @throws FailedPreconditionError when the workspace has none */
  resolveProviderCredentials(workspaceId: string): Promise<ProviderCallCredentials>;
  /** One key of the workspace, by id. @throws FailedPreconditionError when the workspace has no such key */
  resolveKeyCredentials(workspaceId: string, keyId: string): Promise<ProviderCallCredentials>;
}

/** The workspace's models by full id; ModelService is one. */
export interface WorkspaceModelSource {
  findModel(workspaceId: string, modelId: string): Promise<ModelRecord | null>;
}

export interface ModelRouterDependencies {
  credentials: ProviderCredentialsSource;
  models: WorkspaceModelSource;
  openRouter: Pick<OpenRouterClient, 'complete'>;
  /** @default a ScriptedChatModel with the catalog's prices */
  scripted?: ChatModel;
}

/** The family of models the service implements itself. */
const BUILTIN_FAMILY = 'builtin';

export class ModelRouter implements ModelProvider {
  private readonly scripted: ChatModel;

  constructor(private readonly dependencies: ModelRouterDependencies) {
    this.scripted = dependencies.scripted ?? new ScriptedChatModel();
  }

  /**
   * Runs one model turn for the workspace: builtin/scripted in process (no
   * key), a workspace model through the key it names, any other model through
   * OpenRouter with the workspace's key.
   * @throws ModelCallError NO_PROVIDER_KEY, MODEL_NOT_FOUND (an unknown builtin model, a model the workspace no longer has), and whatever the model reports
   */
  async complete(workspaceId: string, request: ChatRequest, options: ChatCallOptions = {}): Promise<ChatResponse> {
    if (request.model === SCRIPTED_MODEL_ID) return this.scripted.complete(request, options);
    if (modelFamily(request.model) === BUILTIN_FAMILY) {
      throw new ModelCallError(ModelCallErrorType.MODEL_NOT_FOUND, `there is no builtin model ${request.model}; the builtin model is ${SCRIPTED_MODEL_ID}`);
    }
    if (options.signal?.aborted) throw new ModelCallError(ModelCallErrorType.CANCELLED, `the call to model ${request.model} was cancelled`);
    const model = await this.dependencies.models.findModel(workspaceId, request.model);
    if (!model) {
      throw new ModelCallError(ModelCallErrorType.MODEL_NOT_FOUND, `model ${request.model} is not a model of workspace ${workspaceId} (deleted or renamed since the objective started); choose another in the variation's spec.modelConfig.modelId`);
    }
    if (!isWorkspaceModel(model)) {
      return this.dependencies.openRouter.complete(await this.credentials(() => this.dependencies.credentials.resolveProviderCredentials(workspaceId)), request, options);
    }
    const credentials = await this.credentials(() => this.dependencies.credentials.resolveKeyCredentials(workspaceId, model.aiProviderKeyId));
    const route: CallRoute = { upstreamModel: model.upstreamModel ?? request.model, prices: pricesOf(model) };
    return this.dependencies.openRouter.complete(credentials, request, options, route);
  }

  /** @throws ModelCallError NO_PROVIDER_KEY when the key is missing */
  private async credentials(resolve: () => Promise<ProviderCallCredentials>): Promise<ProviderCallCredentials> {
    try {
      return await resolve();
    } catch (error) {
      if (error instanceof FailedPreconditionError) throw new ModelCallError(ModelCallErrorType.NO_PROVIDER_KEY, error.message);
      throw error;
    }
  }
}
