// Reading a node's /metrics as Prometheus would: the families it declares
// (`# TYPE` lines) and every sample with its labels, so tests can look a value
// up by name and labels and compare two scrapes.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Scrape {
  /** Family name → type (counter, gauge, histogram, summary, untyped). */
  types: Map<string, string>;
  samples: Sample[];
  /** The sum of the samples named `name` whose labels include `labels` (0 when none). */
  value(name: string, labels?: Record<string, string>): number;
  /** The family a sample name belongs to (`x_bucket` of histogram `x` → `x`), or undefined when none is declared. */
  familyOf(sampleName: string): string | undefined;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
const HISTOGRAM_SUFFIXES = ['_bucket', '_sum', '_count'];
const SUMMARY_SUFFIXES = ['_sum', '_count'];

function parseValue(text: string): number {
  if (/^nan$/i.test(text)) return NaN;
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  return Number(text);
}

export function parseScrape(text: string): Scrape {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('# TYPE ')) {
      const [name, type] = line.slice('# TYPE '.length).split(' ');
      types.set(name, type);
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(LABEL)) labels[name] = value.replace(/\\(.)/g, (_, escaped: string) => (escaped === 'n' ? '\n' : escaped));
    samples.push({ name: match[1], labels, value: parseValue(match[3]) });
  }
  const familyOf = (sampleName: string): string | undefined => {
    if (types.has(sampleName)) return sampleName;
    for (const suffix of HISTOGRAM_SUFFIXES) {
      if (!sampleName.endsWith(suffix)) continue;
      const base = sampleName.slice(0, -suffix.length);
      const type = types.get(base);
      if (type === 'histogram' || (type === 'summary' && SUMMARY_SUFFIXES.includes(suffix))) return base;
    }
    return undefined;
  };
  return {
    types,
    samples,
    familyOf,
    value(name, labels = {}) {
      return samples
        .filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
        .reduce((sum, sample) => sum + sample.value, 0);
    },
  };
}
