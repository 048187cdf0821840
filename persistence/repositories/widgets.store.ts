// WidgetsStore over TypeORM: widgets and widget sessions (migration Widgets).
// The hostname's uniqueness is the unique index's (race-safe); the session read
// of every widget request joins its widget in one statement. A session is
// inserted under a share lock of its widget's row and a hostname change holds
// that row locked while it ends the sessions, so no session outlives a move.
import type { DataSource, EntityManager } from 'typeorm';
import type { WorkspaceStatus } from '../../src/auth/workspace-access';
import type { WidgetsStore } from '../../src/ports/widgets-store';
import { WidgetEntity, WidgetSessionEntity } from '../entities/widget.entity';
import { registerUniqueMessage, translateDriverError } from './driver-errors';
import { fetchPage } from './list-query';
import { entityColumns, readRows, readStatement, recordTable } from './record-table';
import { runTransaction } from '../transaction-runner';

registerUniqueMessage('uq_widgets_hostname', 'a widget with this hostname already exists (hostnames are unique across all accounts)');

export function createWidgetsStore(dataSource: DataSource): WidgetsStore {
  return storeFor(dataSource.manager, dataSource);
}

/** The widgets store bound to `manager` (the data source's, or an open transaction's). */
function storeFor(manager: EntityManager, dataSource: DataSource): WidgetsStore {
  const widgets = manager.getRepository(WidgetEntity);
  const sessions = manager.getRepository(WidgetSessionEntity);
  const widgetColumns = entityColumns(manager, WidgetEntity, 'w');
  const sessionColumns = entityColumns(manager, WidgetSessionEntity, 's');
  const sessionWithWidget = readStatement(
    `SELECT ${sessionColumns.json} AS s, ${widgetColumns.json} AS w, ws.status AS workspace_status FROM widget_sessions s JOIN widgets w ON w.id = s.widget_id JOIN workspaces ws ON ws.id = s.workspace_id WHERE s.id = $1`,
  );
  return {
    transaction: (work) => runTransaction(dataSource, (tx) => work(storeFor(tx, dataSource)), { joining: manager }),
    widgets: {
      ...recordTable(manager, WidgetEntity),
      list(workspaceId, page, filter) {
        const query = widgets.createQueryBuilder('w').where('w.workspace_id = :workspaceId', { workspaceId });
        if (filter.agentId !== undefined) query.andWhere('w.agent_id = :agentId', { agentId: filter.agentId });
        return fetchPage(query, 'w', page, filter);
      },
      findByHostname: (hostname) => widgets.findOneBy({ hostname }),
      findForUpdate: (id) => widgets.findOne({ where: { id }, lock: { mode: 'pessimistic_write' } }),
    },
    sessions: {
      insert(record, hostname) {
        return runTransaction(dataSource, async (tx) => {
          // FOR SHARE waits for a hostname change holding the row (FOR UPDATE), then reads the row it left.
          const serving = await tx.query('SELECT 1 FROM widgets WHERE id = $1 AND hostname = $2 FOR SHARE', [record.widgetId, hostname]);
          if (serving.length === 0) return false;
          try {
            await tx.getRepository(WidgetSessionEntity).insert(record);
          } catch (error) {
            throw translateDriverError(error);
          }
          return true;
        }, { joining: manager });
      },
      async deleteOfWidget(widgetId) {
        const result = await sessions.delete({ widgetId });
        return result.affected ?? 0;
      },
      findById: (id) => sessions.findOneBy({ id }),
      async findWithWidget(id) {
        const row = (await readRows(manager, sessionWithWidget, [id]))[0];
        const session = row ? sessionColumns.decode(row.s) : null;
        const widget = row ? widgetColumns.decode(row.w) : null;
        return session && widget ? { session, widget, workspaceStatus: row.workspace_status as WorkspaceStatus } : null;
      },
      async delete(id) {
        await sessions.delete({ id });
      },
      async deleteExpired(before, limit) {
        const rows: Array<{ deleted: number }> = await manager.query(
          `WITH gone AS (
             DELETE FROM widget_sessions WHERE id IN (
               SELECT id FROM widget_sessions WHERE expires_at < $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED
             ) RETURNING 1
           ) SELECT count(*)::int AS deleted FROM gone`,
          [before, limit],
        );
        return rows[0].deleted;
      },
    },
  };
}
