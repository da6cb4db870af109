// js-yaml ships no types; the one function the deployment check uses.
declare module 'js-yaml' {
  const yaml: { load(text: string): unknown };
  export default yaml;
}
