// The ModelProvider the objective actor's `model.call` effect calls: routes a
// request by its model id to builtin/scripted or to the OpenRouter client,
// resolving and decrypting the workspace's provider key for that call only
// (it is never kept, logged or put in a result).
import { FailedPreconditionError } from '../errors';
import type { ChatCallOptions, ChatModel, ChatRequest, ChatResponse, ModelProvider } from '../ports/model-provider';
import { modelFamily, SCRIPTED_MODEL_ID } from './catalog';
import { ModelCallError, ModelCallErrorType } from './model-call-error';
import type { OpenRouterClient, ProviderCallCredentials } from './openrouter-client';
import { ScriptedChatModel } from './scripted-model';

/** Where a workspace's provider key comes from; AiProviderKeyService is one. */
export interface ProviderCredentialsSource {
  /** @throws FailedPreconditionError when the workspace has no key for the provider */
  resolveProviderCredentials(workspaceId: string): Promise<ProviderCallCredentials>;
}

export interface ModelRouterDependencies {
  credentials: ProviderCredentialsSource;
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
   * key), any other model through OpenRouter with the workspace's key.
   * @throws ModelCallError NO_PROVIDER_KEY, MODEL_NOT_FOUND (an unknown builtin model), and whatever the model reports
   */
  async complete(workspaceId: string, request: ChatRequest, options: ChatCallOptions = {}): Promise<ChatResponse> {
    if (request.model === SCRIPTED_MODEL_ID) return this.scripted.complete(request, options);
    if (modelFamily(request.model) === BUILTIN_FAMILY) {
      throw new ModelCallError(ModelCallErrorType.MODEL_NOT_FOUND, `there is no builtin model ${request.model}; the builtin model is ${SCRIPTED_MODEL_ID}`);
    }
    if (options.signal?.aborted) throw new ModelCallError(ModelCallErrorType.CANCELLED, `the call to model ${request.model} was cancelled`);
    let credentials: ProviderCallCredentials;
    try {
      credentials = await this.dependencies.credentials.resolveProviderCredentials(workspaceId);
    } catch (error) {
      if (error instanceof FailedPreconditionError) throw new ModelCallError(ModelCallErrorType.NO_PROVIDER_KEY, error.message);
      throw error;
    }
    return this.dependencies.openRouter.complete(credentials, request, options);
  }
}
