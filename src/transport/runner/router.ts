// Path matching: a segment trie per path, static segments before parameters. It also knows
// which methods a path has, so a wrong method answers 405 with Allow.
import type { AnyRoute, Method } from './route.js';

interface Node {
  statics: Map<string, Node>;
  param: { name: string; node: Node } | null;
  routes: Map<Method, AnyRoute>;
}

const node = (): Node => ({ statics: new Map(), param: null, routes: new Map() });

export type Match =
  | { kind: 'found'; route: AnyRoute; params: Record<string, string> }
  | { kind: 'method'; allow: Method[] }
  | { kind: 'none' };

export class Router {
  private readonly root = node();
  readonly routes: AnyRoute[] = [];

  add(r: AnyRoute): void {
    let n = this.root;
    for (const seg of split(r.path)) {
      if (seg.startsWith('{') && seg.endsWith('}')) {
        const name = seg.slice(1, -1);
        if (n.param && n.param.name !== name) throw new Error(`conflicting parameter names at ${r.path}`);
        n.param ??= { name, node: node() };
        n = n.param.node;
      } else {
        let next = n.statics.get(seg);
        if (!next) {
          next = node();
          n.statics.set(seg, next);
        }
        n = next;
      }
    }
    if (n.routes.has(r.method)) throw new Error(`duplicate route ${r.method} ${r.path}`);
    n.routes.set(r.method, r);
    this.routes.push(r);
  }

  match(method: string, path: string): Match {
    const params: Record<string, string> = {};
    const n = walk(this.root, split(path), 0, params);
    if (!n || n.routes.size === 0) return { kind: 'none' };
    const r = n.routes.get(method as Method);
    if (r) return { kind: 'found', route: r, params };
    return { kind: 'method', allow: [...n.routes.keys()] };
  }
}

function walk(n: Node, segs: string[], i: number, params: Record<string, string>): Node | null {
  if (i === segs.length) return n;
  const seg = segs[i] as string;
  const s = n.statics.get(seg);
  if (s) {
    const found = walk(s, segs, i + 1, params);
    if (found && found.routes.size > 0) return found;
  }
  if (n.param && seg.length > 0) {
    const found = walk(n.param.node, segs, i + 1, params);
    if (found) {
      params[n.param.name] = safeDecode(seg);
      return found;
    }
  }
  return null;
}

const split = (path: string): string[] => path.split('/').filter((s, i) => i > 0 || s !== '');

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
