// The composition root's public surface: the node start-up (src/server.ts),
// the tests and the benches build a process's service graph through it, then
// hand the services to the HTTP app and to the actor kinds.
export { createServices, type ServicesOptions } from './services';
export { createAppDependencies, type AppOptions } from './app';
