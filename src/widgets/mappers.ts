// Record → wire mapping of a widget: `{metadata, spec, info}`, optional fields only when set.
import { toResourceMetadata } from '../resource/metadata';
import type { Widget } from '../schemas/widgets.schema';
import type { WidgetRecord } from './records';
import { widgetBaseUrl } from './widget-base-url';

export function toWidget(record: WidgetRecord, baseUrlTemplate: string | undefined): Widget {
  return {
    metadata: toResourceMetadata(record, record.workspaceId),
    spec: {
      agentId: record.agentId,
      hostname: record.hostname,
      allowedOrigins: record.allowedOrigins,
      ...(record.title !== null ? { title: record.title } : {}),
      ...(record.greeting !== null ? { greeting: record.greeting } : {}),
      theme: record.theme,
      allowVisitorApprovals: record.allowVisitorApprovals,
    },
    info: { baseUrl: widgetBaseUrl(baseUrlTemplate, record.hostname) },
  };
}
