// Creator profiles for `info.createdBy`, loaded once per distinct id.
import type { ProfileRecord } from '../accounts/records';
import type { FoundationStore } from '../ports/foundation-store';

/** The profiles of the given ids (nulls and repeats ignored), by id. */
export async function loadProfiles(foundation: FoundationStore, ids: Array<string | null>): Promise<Map<string, ProfileRecord>> {
  const unique = [...new Set(ids.filter((id): id is string => !!id))];
  const found = await Promise.all(unique.map((id) => foundation.profiles.findById(id)));
  return new Map(found.filter((profile) => profile !== null).map((profile) => [profile.id, profile]));
}
