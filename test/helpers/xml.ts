// XML for tests, read by Python's expat-based ElementTree: a strict parser independent of ours
// (fast-xml-parser is not installed; python3 is on every machine of this kind).
import { execFileSync } from 'node:child_process';

/** Visits every key of a JSON value, depth first. */
export function walk(v: unknown, path: string, visit: (path: string, key: string, value: unknown) => void): void {
  if (Array.isArray(v)) {
    for (const [i, x] of v.entries()) walk(x, `${path}[${i}]`, visit);
  } else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      visit(`${path}.${k}`, k, x);
      walk(x, `${path}.${k}`, visit);
    }
  }
}

/** The text of the root element of a small XML document (throws if it is not well-formed). */
export function xmlText(doc: string): string {
  return execFileSync('python3', ['-c', 'import sys,xml.etree.ElementTree as E; print(E.fromstring(sys.stdin.read()).text, end="")'], {
    input: doc,
  }).toString('utf8');
}

export interface ParsedRss {
  root: string;
  version: string;
  title: string;
  items: { guid: string; link: string; pubDate: string; title: string }[];
}

/** RSS 2.0 through Python's expat-based ElementTree: a strict, independent XML parser. */
export function parseXml(xml: string): ParsedRss {
  const script = `
import sys, json, xml.etree.ElementTree as E
root = E.fromstring(sys.stdin.buffer.read())
ch = root.find('channel')
items = [{k: (i.findtext(k) or '') for k in ('guid', 'link', 'pubDate', 'title')} for i in ch.findall('item')]
print(json.dumps({'root': root.tag, 'version': root.get('version'), 'title': ch.findtext('title'), 'items': items}))
`;
  return JSON.parse(execFileSync('python3', ['-c', script], { input: xml }).toString('utf8')) as ParsedRss;
}
