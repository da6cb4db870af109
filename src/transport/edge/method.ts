// What an HTTP method is (DECISIONS.md "Runtime"; docs/api.md "Methods"). On the supported uWS
// build every request line reaches the catch-all routes with its method exactly as sent:
// - a method a route does not take (PROPFIND, FOO, lowercase `get`: methods are case-sensitive,
//   RFC 9110 §9.1) is answered 405 with Allow by the router;
// - a method that is not HTTP at all, meaning it is not an RFC 9110 token (§5.6.2: one or more of
//   the letters, digits and ! # $ % & ' * + - . ^ _ ` | ~), e.g. `G(T`, `A/B` or `X[Y]`, is answered
//   501 NOT_IMPLEMENTED and the connection is closed. Bytes outside ASCII never get this far: uWS
//   answers such a request line 505 itself.
// The 20.30 fallback build's parser closes the connection for any method outside its fixed list.

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** True when `method` is an RFC 9110 token, so it can be an HTTP method at all. GET, the method of
 * nearly every request, is known without the pattern (a regular expression's test writes its
 * match state: measured 40-70 ns a request under load, docs/benchmarks-history.md). */
export const isHttpMethod = (method: string): boolean => method === 'GET' || TOKEN.test(method);

/** The message of the 501 answer to a method that is not HTTP. */
export const notHttpMessage = (method: string): string =>
  `${JSON.stringify(method)} is not an HTTP method (RFC 9110: a token of letters, digits and !#$%&'*+-.^_\`|~)`;
