// Tool discovery as an objective runs it (issue 25 item 5), resolved from its
// variation when the objective is created: whether `search_tools` is
// offered, and with which hints, result count and minimum score. A variation
// has two ways to ask for discovery (spec 2.14):
//
// 1. `progressiveDiscovery` (the newer form), when set (an empty object
//    included): it alone decides. `hints` (default none), `maxTools`
//    (default 10) and `rerankThreshold` (default 0, keeps every match);
//    `toolSelection` is then ignored.
// 2. Else `toolSelection`: discovery is on when `autoDiscovery` is set or
//    `assignedTools.allowDiscovery` is true, with `autoDiscovery`'s `hints`
//    and `maxTools` (same defaults; this form has no threshold: 0). An
//    explicit `allowDiscovery: false` keeps the objective to its assigned
//    tools even with `autoDiscovery` set: it is the form's own "no".
//
// Anything else: no discovery, and `search_tools` is not offered.
import type { VariationRecord } from '../agents/records';
import type { ObjectiveDiscovery } from '../ports/service-tools';
import { DEFAULT_MAX_TOOLS } from '../search/search.service';
import type { ObjectiveStart } from './objective-state';

/** The variation's discovery settings with the defaults filled, or null when it allows none. */
export function discoverySettingsOf(variation: Pick<VariationRecord, 'progressiveDiscovery' | 'toolSelection'>): ObjectiveDiscovery | null {
  const progressive = variation.progressiveDiscovery;
  if (progressive) {
    return { hints: progressive.hints ?? [], maxTools: progressive.maxTools ?? DEFAULT_MAX_TOOLS, rerankThreshold: progressive.rerankThreshold ?? 0 };
  }
  const selection = variation.toolSelection;
  const allowed = selection?.assignedTools?.allowDiscovery;
  if (allowed === false || !(selection?.autoDiscovery || allowed === true)) return null;
  const auto = selection.autoDiscovery;
  return { hints: auto?.hints ?? [], maxTools: auto?.maxTools ?? DEFAULT_MAX_TOOLS, rerankThreshold: 0 };
}

/** The `discovery` field of an objective's start: present only when the variation allows discovery. */
export function discoveryOf(variation: Pick<VariationRecord, 'progressiveDiscovery' | 'toolSelection'>): Pick<ObjectiveStart, 'discovery'> {
  const discovery = discoverySettingsOf(variation);
  return discovery ? { discovery } : {};
}
