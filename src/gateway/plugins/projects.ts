// projects.list and projects.getServiceAccount: wired stubs with the real shapes.
// There is no project catalog; the list holds --project-id plus every project
// this gateway has seen in a request path.
import type { FastifyInstance } from 'fastify';
import type { Family, GatewayContext } from '../context.js';
import { kind } from '../context.js';
import { checkProjectId } from '../validate.js';
import { etagOf, type ProjectParams } from './common.js';

const seenProjects = new Set<string>();

export function noteProject(projectId: string): void {
  if (seenProjects.size < 1000) seenProjects.add(projectId);
}

export function registerProjects(app: FastifyInstance, ctx: GatewayContext, family: Family): void {
  // Callback form, and a seen project is not checked again: this hook runs on
  // every REST request (an async hook costs a promise and a microtask hop each).
  app.addHook('preHandler', (req, _reply, done) => {
    const p = (req.params as Partial<ProjectParams> | undefined)?.projectId;
    if (typeof p === 'string' && p && !seenProjects.has(p)) {
      try {
        noteProject(checkProjectId(p));
      } catch {
        // invalid ids (e.g. Node's unresolved {{projectId}}) are answered by the route, not listed
      }
    }
    done();
  });

  app.get('/projects', async () => {
    const ids = new Set<string>();
    if (ctx.config.projectId) ids.add(ctx.config.projectId);
    for (const p of seenProjects) ids.add(p);
    const projects = [...ids].map((id, i) => ({
      kind: kind(family, 'project'),
      id,
      numericId: String(100000000000 + i),
      projectReference: { projectId: id },
      friendlyName: id,
    }));
    return { kind: kind(family, 'projectList'), etag: etagOf(projects.map((p) => p.id).join(',')), projects, totalItems: projects.length };
  });

  app.get<{ Params: ProjectParams }>('/projects/:projectId/serviceAccount', async (req) => {
    checkProjectId(req.params.projectId);
    return {
      kind: kind(family, 'getServiceAccountResponse'),
      email: `bq-${100000000000}@${family}-encryption.iam.gserviceaccount.com`,
    };
  });
}
