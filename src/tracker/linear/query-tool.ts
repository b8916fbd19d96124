/**
 * `linear_graphql`: Linear's own GraphQL offered to agents as one read-only tool, scoped to
 * the configured project. It runs with the service's key, so the scope is enforced here, by
 * allowlists over Linear's introspected schema, never by a list of things to refuse:
 *
 *  1. one `query` operation (a mutation or subscription is refused: writes go through the
 *     write tools), valid against the schema, its variables coerced as Linear would;
 *  2. every selection is on a readable type: the query root, the project's issues, comments,
 *     relations and the project itself (checked in the answer, step 4), or workspace metadata
 *     (teams, users, workflow states, labels, `PageInfo`, introspection); anything else
 *     (organization, cycles, documents, attachments …) is refused, as is a leaf field of the
 *     query root and a JSON field of workspace metadata;
 *  3. nothing outside can be probed: every listing of issues, comments or projects (but a
 *     project's issues and an issue's comments and relations), and every read that chooses
 *     by more than `id`, must carry the project in its filter (`project: { slugId: { eq } }`
 *     for issues …); no filter may reach other issues, comments or projects through a
 *     relation (`parent`, `team.issues`, `assignee.assignedIssues` …) or filter on a type the
 *     tool cannot read. So neither a refusal nor paging says whether something outside exists;
 *  4. the document is rewritten to carry, in every selection set, `__typename` and what
 *     places the object (an issue's project slug, a comment's issue's project …) and, for
 *     connections and edges, their nodes; the answer is walked and any issue, comment,
 *     relation or project outside the project refuses the whole answer (nothing is trimmed),
 *     else the added keys are removed.
 *
 * The schema is introspected once per tracker, on the first call (a failure is not kept).
 * `run` never throws; every message passes through the key's redactor.
 */
import {
  buildClientSchema,
  type DocumentNode,
  type FieldNode,
  type GraphQLArgument,
  type GraphQLCompositeType,
  type GraphQLError,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLSchema,
  getArgumentValues,
  getIntrospectionQuery,
  getNamedType,
  getNullableType,
  getVariableValues,
  type IntrospectionQuery,
  isCompositeType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  parse,
  print,
  type SelectionNode,
  type SelectionSetNode,
  TypeInfo,
  validate,
  visit,
  visitWithTypeInfo,
} from 'graphql';
import { TrackerError } from '../../domain/errors.js';
import type { TrackerQueryAnswer, TrackerQueryTool } from '../../domain/tracker.js';
import { record, str } from './values.js';

/** The tool's name as agents see it. */
export const LINEAR_QUERY_TOOL_NAME = 'linear_graphql';
/** Longest query text accepted. */
export const MAX_QUERY_CHARS = 20_000;
/** Longest variables object accepted (as JSON). */
export const MAX_VARIABLES_CHARS = 20_000;
/** Largest answer returned (as JSON); a larger one asks for a smaller query. */
export const MAX_ANSWER_CHARS = 256 * 1024;

const MAX_MESSAGES = 3;
/** Prefix of every key the rewrite adds; a query may not use it. */
const PREFIX = 'orchScope';
const TYPE_KEY = `${PREFIX}Type`;

/** The entities an answer is checked for, each with what places it in a project. */
type ScopedEntity = 'Issue' | 'Project' | 'Comment' | 'IssueRelation';

const PLACE_IN_PROJECT = 'project { slugId }';
/** Added to every selection set of the entity: its reference and what places it. */
const ENTITY_ADDITIONS: Readonly<Record<ScopedEntity, string>> = {
  Issue: `${PREFIX}Ref: identifier ${PREFIX}Project: ${PLACE_IN_PROJECT}`,
  Project: `${PREFIX}Ref: id ${PREFIX}Slug: slugId`,
  Comment: `${PREFIX}Ref: id ${PREFIX}Issue: issue { ${PLACE_IN_PROJECT} }`,
  IssueRelation: `${PREFIX}Ref: id ${PREFIX}Issue: issue { ${PLACE_IN_PROJECT} } ${PREFIX}Related: relatedIssue { ${PLACE_IN_PROJECT} }`,
};
/** The fields the additions need (paths from the entity); a schema without them leaves the entity unreadable. */
const ENTITY_NEEDS: Readonly<Record<ScopedEntity, readonly (readonly string[])[]>> = {
  Issue: [['identifier'], ['project', 'slugId']],
  Project: [['id'], ['slugId']],
  Comment: [['id'], ['issue', 'project', 'slugId']],
  IssueRelation: [['id'], ['issue', 'project', 'slugId'], ['relatedIssue', 'project', 'slugId']],
};
const SCOPED_ENTITIES = Object.keys(ENTITY_ADDITIONS) as ScopedEntity[];
/** Workspace metadata, readable without a check (with their connections and edges). */
const OPEN_ENTITIES = ['User', 'Team', 'WorkflowState', 'IssueLabel'];
const OPEN_TYPES = [
  'PageInfo',
  '__Schema',
  '__Type',
  '__Field',
  '__InputValue',
  '__EnumValue',
  '__Directive',
];
/** JSON summaries on workspace metadata (a team's progress over every project, its settings). */
const JSON_SCALARS = new Set(['JSON', 'JSONObject']);
/** Arguments that page or order a listing, or name one object, without searching. */
const PAGING_ARGS = new Set(['first', 'last', 'after', 'before', 'orderBy', 'includeArchived', 'id']);
/** Fields whose items belong to their parent, so the parent's check covers what a filter can pick. */
const WITHIN_PARENT = new Set([
  'Project.issues',
  'Issue.comments',
  'Issue.relations',
  'Issue.inverseRelations',
  'Comment.children',
]);
/** Fields of a filter that combine filters of the same objects rather than follow a relation. */
const SAME_OBJECT_FIELDS = new Set(['and', 'or', 'some', 'every']);
/** `IssueFilter`, `NullableIssueFilter`, `IssueCollectionFilter` → `Issue`. */
const FILTER_NAME = /^(?:Nullable)?(\w+?)(?:Collection)?Filter$/;

/** What the tool knows of the schema, built once from the introspection. */
interface ScopeModel {
  schema: GraphQLSchema;
  rootName: string;
  /** Composite types a query may select in. */
  readable: ReadonlySet<string>;
  /** The checked entity an object, a connection or an edge type holds. */
  entityOf: ReadonlyMap<string, ScopedEntity>;
  /** Selections added to each selection set of a type (just `__typename` when absent). */
  additions: ReadonlyMap<string, readonly SelectionNode[]>;
}

/** The part of GraphqlClient the tool uses. */
export interface GraphqlRequester {
  request(
    what: string,
    document: string,
    variables: Record<string, unknown>,
  ): Promise<Record<string, unknown>>;
}

type Refusal = Extract<TrackerQueryAnswer, { ok: false }>;

class Refused extends Error {
  constructor(readonly answer: Refusal) {
    super(answer.message);
  }
}

const invalid = (message: string) => new Refused({ ok: false, reason: 'invalid', message });
const forbidden = (message: string) => new Refused({ ok: false, reason: 'forbidden', message });

/** `linear_graphql` over one client, scoped to one project. */
export class LinearQueryTool implements TrackerQueryTool {
  readonly name = LINEAR_QUERY_TOOL_NAME;
  readonly description: string;
  private model: Promise<ScopeModel> | null = null;
  private readonly typenameOnly: readonly SelectionNode[] = selections(`${TYPE_KEY}: __typename`);

  constructor(
    private readonly client: GraphqlRequester,
    private readonly slug: string,
    private readonly redact: (text: string) => string,
  ) {
    const example = `{ issues(filter: { project: { slugId: { eq: "${slug}" } } }, first: 10) { nodes { identifier title state { name } } } }`;
    this.description =
      `Read-only GraphQL over Linear's API, scoped to the project ${slug}: one query (with variables), ` +
      'no mutations (write with tracker_comment and tracker_transition). Every issue, comment and ' +
      `project in the answer must belong to ${slug}, and every listing of issues must say so with ` +
      `project: { slugId: { eq: "${slug}" } } in its filter, for example ${example}. Teams, users, workflow states, ` +
      'labels and the schema (__type) are readable; other types (organization, cycles, documents, ' +
      'attachments …) are not. A refusal says why, as invalid (syntax, schema, size) or forbidden ' +
      '(outside the project); an answer is never trimmed.';
  }

  async run(query: string, variables: Readonly<Record<string, unknown>>): Promise<TrackerQueryAnswer> {
    try {
      return await this.answer(query, variables);
    } catch (error) {
      if (error instanceof Refused) return { ...error.answer, message: this.redact(error.answer.message) };
      const message = error instanceof Error ? error.message : String(error);
      return {
        ok: false,
        reason: 'failed',
        message: this.redact(error instanceof TrackerError ? message : `${this.name}: ${message}`),
      };
    }
  }

  private async answer(
    query: string,
    variables: Readonly<Record<string, unknown>>,
  ): Promise<TrackerQueryAnswer> {
    if (typeof query !== 'string' || query.trim() === '') throw invalid('the query is empty');
    if (query.length > MAX_QUERY_CHARS)
      throw invalid(`the query has ${query.length} characters; at most ${MAX_QUERY_CHARS} are accepted`);
    if (typeof variables !== 'object' || variables === null || Array.isArray(variables))
      throw invalid('variables must be an object');
    const variablesText = JSON.stringify(variables);
    if (variablesText.length > MAX_VARIABLES_CHARS)
      throw invalid(
        `the variables are ${variablesText.length} characters of JSON; at most ${MAX_VARIABLES_CHARS}`,
      );

    const document = parseQuery(query);
    const operation = singleQuery(document);
    refusePrefixedKeys(document);

    const model = await this.scopeModel();
    const problems = validate(model.schema, document);
    if (problems.length > 0) throw invalid(`the query does not fit Linear's schema: ${summary(problems)}`);
    const coerced = getVariableValues(
      model.schema,
      operation.variableDefinitions ?? [],
      { ...variables },
      {
        maxErrors: MAX_MESSAGES,
      },
    );
    if (coerced.errors !== undefined) throw invalid(`the variables do not fit: ${summary(coerced.errors)}`);

    this.checkScope(model, document, coerced.coerced);
    const sent = print(this.withAdditions(model, document));
    const data = await this.client.request(`${this.name}: run the query`, sent, { ...variables });
    this.checkAnswer(data);
    const out = stripAdded(data);
    const size = JSON.stringify(out).length;
    if (size > MAX_ANSWER_CHARS)
      throw invalid(
        `the answer is ${Math.ceil(size / 1024)} KB, more than ${MAX_ANSWER_CHARS / 1024} KB: ask for fewer fields or a smaller first`,
      );
    return { ok: true, data: out };
  }

  // ------------------------------------------------------------------ schema

  /** The schema model, introspected on first use; a failed introspection is tried again next time. */
  private scopeModel(): Promise<ScopeModel> {
    if (this.model === null) {
      const loading = this.loadModel();
      this.model = loading;
      loading.catch(() => {
        if (this.model === loading) this.model = null;
      });
    }
    return this.model;
  }

  private async loadModel(): Promise<ScopeModel> {
    const what = `${this.name}: read Linear's schema`;
    const data = await this.client.request(what, getIntrospectionQuery({ descriptions: false }), {});
    let schema: GraphQLSchema;
    try {
      schema = buildClientSchema(data as unknown as IntrospectionQuery);
    } catch (error) {
      throw new TrackerError(
        'tracker_payload_error',
        `${what}: the introspection answer is not a schema (${error instanceof Error ? error.message : String(error)})`,
      );
    }
    return buildModel(schema, what);
  }

  // ------------------------------------------------------------------ static checks

  /** Refuses a selection outside the readable types and an argument that could probe outside the project. */
  private checkScope(model: ScopeModel, document: DocumentNode, variables: Record<string, unknown>): void {
    const typeInfo = new TypeInfo(model.schema);
    visit(
      document,
      visitWithTypeInfo(typeInfo, {
        Field: (node) => {
          const parent = typeInfo.getParentType();
          const def = typeInfo.getFieldDef();
          if (parent === null || parent === undefined || def === null || def === undefined)
            throw invalid(`unknown field ${node.name.value}`);
          this.checkField(model, node, parent, def, variables);
          return undefined;
        },
      }),
    );
  }

  private checkField(
    model: ScopeModel,
    node: FieldNode,
    parent: GraphQLCompositeType,
    def: GraphQLField<unknown, unknown>,
    variables: Record<string, unknown>,
  ): void {
    const field = node.name.value;
    if (field === '__typename') return;
    const where = parent.name === model.rootName ? field : `${parent.name}.${field}`;
    if (!model.readable.has(parent.name)) throw forbidden(`${where}: ${this.unreadable(parent.name)}`);
    const returned = getNamedType(def.type);
    if (isCompositeType(returned) && !model.readable.has(returned.name))
      throw forbidden(`${where} returns ${returned.name}: ${this.unreadable(returned.name)}`);
    if (isLeafType(returned)) {
      if (parent.name === model.rootName)
        throw forbidden(
          `${where}: only objects (issues, the project, teams, users, workflow states, labels) are read from the query root`,
        );
      if (
        JSON_SCALARS.has(returned.name) &&
        !model.entityOf.has(parent.name) &&
        !parent.name.startsWith('__')
      )
        throw forbidden(`${where}: a JSON summary of workspace data is not readable here`);
    }
    const values = argumentValues(def, node, variables, where);
    const entity = model.entityOf.get(returned.name);
    // A connection's nodes and an edge's node were chosen by the connection's own field.
    const holder =
      entity !== undefined && parent.name !== entity && model.entityOf.get(parent.name) === entity;
    if (entity !== undefined && !holder && !WITHIN_PARENT.has(`${parent.name}.${def.name}`)) {
      // A listing, or a read that chooses by anything but id, must say the project itself:
      // checking the answer alone would let its paging or a refusal tell what lies outside.
      const listing = returned.name !== entity || isListType(getNullableType(def.type));
      const choosing = Object.keys(values).filter((k) => values[k] != null && !PAGING_ARGS.has(k));
      if ((listing || choosing.length > 0) && !this.keepsToProject(entity, values.filter))
        throw forbidden(
          `${where}${choosing.length > 0 ? `(${choosing.join(', ')})` : ''}: ${this.keepToProjectHint(entity)}`,
        );
    }
    for (const arg of def.args) {
      const value = values[arg.name];
      if (value === null || value === undefined) continue;
      this.checkArgument(arg, value, entity, `${where}(${arg.name})`);
    }
  }

  private checkArgument(
    arg: GraphQLArgument,
    value: unknown,
    entity: ScopedEntity | undefined,
    path: string,
  ): void {
    const named = getNamedType(arg.type);
    const filtered = isInputObjectType(named) ? filterEntity(named.name) : null;
    if (filtered === null) this.walkInput(value, arg.type, null, path);
    else if (arg.name === 'filter' && filtered === entity)
      this.walkInput(value, arg.type, { entity: filtered, top: true }, path);
    else this.enterFilter(filtered, value, arg.type, path);
  }

  /**
   * Walks an argument's value with its type. `ctx` is the filter being walked: `top` when it is
   * the listing's own filter of its own entity, where the project field must be the project.
   */
  private walkInput(
    value: unknown,
    type: GraphQLInputType,
    ctx: { entity: string; top: boolean } | null,
    path: string,
  ): void {
    if (value === null || value === undefined) return;
    if (isNonNullType(type)) {
      this.walkInput(value, type.ofType, ctx, path);
      return;
    }
    if (isListType(type)) {
      const items = Array.isArray(value) ? value : [value];
      items.forEach((item, i) => {
        this.walkInput(item, type.ofType, ctx, `${path}[${i}]`);
      });
      return;
    }
    if (!isInputObjectType(type) || typeof value !== 'object') return;
    const fields = type.getFields();
    for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
      const field = fields[key];
      if (inner === null || inner === undefined || field === undefined) continue;
      const sub = `${path}.${key}`;
      if (ctx?.top === true && key === PROJECT_FIELD[ctx.entity]) {
        if (!this.isProjectFilter(ctx.entity, inner))
          throw forbidden(`${sub} must be exactly ${this.projectFilterText(ctx.entity)}`);
        continue;
      }
      const named = getNamedType(field.type);
      const filtered = isInputObjectType(named) ? filterEntity(named.name) : null;
      if (filtered === null)
        this.walkInput(inner, field.type, ctx === null ? null : { ...ctx, top: false }, sub);
      else if (ctx !== null && filtered === ctx.entity && SAME_OBJECT_FIELDS.has(key))
        this.walkInput(inner, field.type, ctx, sub);
      else this.enterFilter(filtered, inner, field.type, sub);
    }
  }

  /** A filter reached through a relation: workspace metadata may be filtered on, nothing else. */
  private enterFilter(entity: string, value: unknown, type: GraphQLInputType, path: string): void {
    if (OPEN_ENTITIES.includes(entity)) {
      this.walkInput(value, type, { entity, top: false }, path);
      return;
    }
    if ((SCOPED_ENTITIES as string[]).includes(entity))
      throw forbidden(
        `${path}: a filter on related ${entity.toLowerCase()}s could match ones outside the project ${this.slug}; filter on the object's own fields, state, team, assignee or labels`,
      );
    throw forbidden(`${path}: filters on ${entity} are not allowed (${this.name} cannot read ${entity})`);
  }

  /** Whether a listing's filter keeps it to the project (the project condition on its `and` path). */
  private keepsToProject(entity: ScopedEntity, filter: unknown): boolean {
    const field = entity === 'Project' ? 'slugId' : PROJECT_FIELD[entity];
    if (field === undefined) return false;
    return andPath(filter).some((f) =>
      entity === 'Project' ? this.isSlugEq(f.slugId) : this.isProjectFilter(entity, f[field]),
    );
  }

  /** `{ slugId: { eq: slug } }` for an issue's project, `{ project: … }` for a comment's issue. */
  private isProjectFilter(entity: string, value: unknown): boolean {
    const keys = presentKeys(value);
    if (entity === 'Issue')
      return keys.length === 1 && keys[0] === 'slugId' && this.isSlugEq(record(value)?.slugId);
    if (entity === 'Comment')
      return (
        keys.length === 1 && keys[0] === 'project' && this.isProjectFilter('Issue', record(value)?.project)
      );
    return false;
  }

  private isSlugEq(value: unknown): boolean {
    const keys = presentKeys(value);
    return keys.length === 1 && keys[0] === 'eq' && record(value)?.eq === this.slug;
  }

  private projectFilterText(entity: string): string {
    const project = `{ slugId: { eq: "${this.slug}" } }`;
    return entity === 'Comment' ? `{ project: ${project} }` : project;
  }

  private keepToProjectHint(entity: ScopedEntity): string {
    const project = `{ slugId: { eq: "${this.slug}" } }`;
    switch (entity) {
      case 'Issue':
        return `a listing of issues must keep to the project: put project: ${project} in its filter (at its top or in an and)`;
      case 'Comment':
        return `a listing of comments must keep to the project: put issue: { project: ${project} } in its filter, or read an issue's comments`;
      case 'Project':
        return `read the project with project(id: "${this.slug}"), or put slugId: { eq: "${this.slug}" } in the listing's filter`;
      case 'IssueRelation':
        return "relations are read through an issue's relations or inverseRelations";
    }
  }

  private unreadable(type: string): string {
    return `${this.name} cannot read ${type}; it reads the issues, comments and project of ${this.slug}, and teams, users, workflow states and labels`;
  }

  // ------------------------------------------------------------------ rewrite and answer

  /** The document with the scope selections added to every selection set. */
  private withAdditions(model: ScopeModel, document: DocumentNode): DocumentNode {
    const typeInfo = new TypeInfo(model.schema);
    return visit(
      document,
      visitWithTypeInfo(typeInfo, {
        SelectionSet: {
          // On leave, so the added selections are not walked themselves; the type is still this set's.
          leave: (node: SelectionSetNode): SelectionSetNode => {
            const type = typeInfo.getParentType();
            const added = (type == null ? undefined : model.additions.get(type.name)) ?? this.typenameOnly;
            return { ...node, selections: [...node.selections, ...added] };
          },
        },
      }),
    );
  }

  /** Refuses an answer holding an issue, comment, relation or project outside the project. */
  private checkAnswer(value: unknown): void {
    if (Array.isArray(value)) {
      for (const item of value) this.checkAnswer(item);
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    const object = value as Record<string, unknown>;
    const type = object[TYPE_KEY];
    if (typeof type === 'string' && (SCOPED_ENTITIES as string[]).includes(type)) {
      const problem = this.outside(type as ScopedEntity, object);
      if (problem !== null) throw forbidden(problem);
    }
    for (const child of Object.values(object)) this.checkAnswer(child);
  }

  /** Why a checked object is outside the project, or null when it is inside. */
  private outside(entity: ScopedEntity, object: Record<string, unknown>): string | null {
    const ref = typeof object[`${PREFIX}Ref`] === 'string' ? (object[`${PREFIX}Ref`] as string) : '?';
    const inProject = (placed: unknown) => str(record(record(placed)?.project)?.slugId) === this.slug;
    const filter = `filter by project: { slugId: { eq: "${this.slug}" } }`;
    switch (entity) {
      case 'Issue':
        return str(record(object[`${PREFIX}Project`])?.slugId) === this.slug
          ? null
          : `the answer holds issue ${ref}, which is not in the project ${this.slug}: ${filter}`;
      case 'Project':
        return str(object[`${PREFIX}Slug`]) === this.slug
          ? null
          : `the answer holds project ${ref}, which is not ${this.slug}: read it with project(id: "${this.slug}")`;
      case 'Comment':
        return inProject(object[`${PREFIX}Issue`])
          ? null
          : `the answer holds comment ${ref}, which is not on an issue of the project ${this.slug}`;
      case 'IssueRelation':
        return inProject(object[`${PREFIX}Issue`]) || inProject(object[`${PREFIX}Related`])
          ? null
          : `the answer holds relation ${ref}, between issues outside the project ${this.slug}`;
    }
  }
}

/** The field's arguments as Linear will read them (variables included); {} when it takes none. */
function argumentValues(
  def: GraphQLField<unknown, unknown>,
  node: FieldNode,
  variables: Record<string, unknown>,
  where: string,
): Record<string, unknown> {
  if (def.args.length === 0) return {};
  try {
    return getArgumentValues(def, node, variables);
  } catch (error) {
    throw invalid(`${where}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The field of a filter that names the project, per entity (a project's own is `slugId`). */
const PROJECT_FIELD: Readonly<Record<string, string>> = { Issue: 'project', Comment: 'issue' };

function buildModel(schema: GraphQLSchema, what: string): ScopeModel {
  const root = schema.getQueryType();
  if (root === null || root === undefined)
    throw new TrackerError('tracker_payload_error', `${what}: the schema has no query type`);
  const readable = new Set<string>([root.name, ...OPEN_TYPES.filter((t) => schema.getType(t) !== undefined)]);
  const entityOf = new Map<string, ScopedEntity>();
  const additions = new Map<string, readonly SelectionNode[]>();
  const family = (name: string, scoped: ScopedEntity | null) => {
    if (!isObjectType(schema.getType(name))) return;
    const inner = scoped === null ? '' : ` ${ENTITY_ADDITIONS[scoped]}`;
    readable.add(name);
    if (scoped !== null) {
      entityOf.set(name, scoped);
      additions.set(name, selections(`${TYPE_KEY}: __typename${inner}`));
    }
    for (const [suffix, field] of [
      ['Connection', 'nodes'],
      ['Edge', 'node'],
    ] as const) {
      const holder = schema.getType(`${name}${suffix}`);
      if (!isObjectType(holder)) continue;
      const items = holder.getFields()[field];
      if (items === undefined || getNamedType(items.type).name !== name) continue;
      readable.add(holder.name);
      if (scoped === null) continue;
      entityOf.set(holder.name, scoped);
      const key = `${PREFIX}${suffix === 'Connection' ? 'Nodes' : 'Node'}`;
      additions.set(
        holder.name,
        selections(`${TYPE_KEY}: __typename ${key}: ${field} { ${TYPE_KEY}: __typename${inner} }`),
      );
    }
  };
  for (const entity of OPEN_ENTITIES) family(entity, null);
  for (const entity of SCOPED_ENTITIES)
    if (ENTITY_NEEDS[entity].every((path) => hasPath(schema, entity, path))) family(entity, entity);
  return { schema, rootName: root.name, readable, entityOf, additions };
}

/** Whether `path` leads through fields from the type `from`. */
function hasPath(schema: GraphQLSchema, from: string, path: readonly string[]): boolean {
  let type: GraphQLNamedType | undefined = schema.getType(from);
  for (const name of path) {
    if (!isObjectType(type)) return false;
    const field = type.getFields()[name];
    if (field === undefined) return false;
    type = getNamedType(field.type);
  }
  return true;
}

function parseQuery(query: string): DocumentNode {
  try {
    return parse(query);
  } catch (error) {
    throw invalid(`the query does not parse: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The document's one operation, which must be a query. */
function singleQuery(document: DocumentNode): OperationDefinitionNode {
  const operations = document.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  if (operations.length !== 1)
    throw invalid(
      `send exactly one operation (the document has ${operations.length}); fragments may go with it`,
    );
  const operation = operations[0] as OperationDefinitionNode;
  if (operation.operation !== 'query')
    throw forbidden(
      `only queries are run, not a ${operation.operation}: write through tracker_comment and tracker_transition`,
    );
  return operation;
}

/** Refuses a response key the rewrite could collide with. */
function refusePrefixedKeys(document: DocumentNode): void {
  visit(document, {
    Field(node) {
      const key = node.alias?.value ?? node.name.value;
      if (key.startsWith(PREFIX))
        throw invalid(`the name ${key} is reserved (no alias may start with ${PREFIX})`);
      return undefined;
    },
  });
}

function summary(errors: readonly GraphQLError[]): string {
  const shown = errors.slice(0, MAX_MESSAGES).map((e) => e.message);
  const more = errors.length > MAX_MESSAGES ? `; and ${errors.length - MAX_MESSAGES} more` : '';
  return `${shown.join('; ')}${more}`;
}

/** Selections parsed from `{ … }` text. */
function selections(text: string): readonly SelectionNode[] {
  const document = parse(`{ ${text} }`, { noLocation: true });
  return (document.definitions[0] as OperationDefinitionNode).selectionSet.selections;
}

/** The answer without the keys the rewrite added. */
function stripAdded(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripAdded);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value as Record<string, unknown>))
    if (!key.startsWith(PREFIX)) out[key] = stripAdded(inner);
  return out;
}

/** The filters combined by AND: the filter itself and, recursively, the items of its `and`. */
function andPath(filter: unknown): Record<string, unknown>[] {
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) return [];
  const f = filter as Record<string, unknown>;
  const and = Array.isArray(f.and) ? f.and : f.and === undefined || f.and === null ? [] : [f.and];
  return [f, ...and.flatMap(andPath)];
}

/** The entity a filter input type filters, or null when the type is not a filter. */
function filterEntity(typeName: string): string | null {
  return FILTER_NAME.exec(typeName)?.[1] ?? null;
}

function presentKeys(value: unknown): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [];
  return Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k]) => k);
}
