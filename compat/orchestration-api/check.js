// @camunda8/orchestration-cluster-api (Camunda's Orchestration Cluster API client for Node,
// the 8.8 line) against a running Beeline node's REST API: every scenario through the client's
// operations and its polling job worker.
//
// Run by run.sh, which starts the node and sets CAMUNDA_REST_ADDRESS and BEELINE_MONITORING.
// Prints "ok    <check>", "FAIL  <check>: <why>", or "skip  <what>: <why>" for what Beeline
// does not serve yet (counted apart, never as a pass); exits 1 if any check failed.
//
// The client validates what it sends and, in "fanatical" mode, every answer against the 8.8 API
// specification it was generated from: a missing or mistyped field, or one the specification does
// not have, fails the call. One answer is read without that validation (decision evaluation,
// see evaluateDecision below), where the client's own schema contradicts Camunda 8.8's server.
'use strict'

const fs = require('fs')
const path = require('path')
const { createCamundaClient } = require('@camunda8/orchestration-cluster-api')

const MODELS = path.join(__dirname, '..', 'models') // shared with compat/node and compat/python
const PARTITIONS = Number(process.env.BEELINE_PARTITIONS || '2')
const MONITORING = process.env.BEELINE_MONITORING

class Mismatch extends Error {}

const failures = []
let checks = 0
let skips = 0
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

function clientWith(validation) {
  return createCamundaClient({
    config: {
      CAMUNDA_REST_ADDRESS: process.env.CAMUNDA_REST_ADDRESS,
      CAMUNDA_AUTH_STRATEGY: 'NONE',
      CAMUNDA_SDK_VALIDATION: validation,
      CAMUNDA_SDK_LOG_LEVEL: 'silent',
    },
  })
}

// What a user runs with the checks on: requests checked before they are sent, answers checked
// against the specification, extra fields included.
const camunda = clientWith('req:strict,res:fanatical')
// Sends what the client's request schema would refuse (to see Beeline refuse it), and reads
// the decision evaluation (see evaluateDecision).
const unchecked = clientWith('none')

// ---- assertions -----------------------------------------------------------------------------

function expect(condition, message) {
  if (!condition) throw new Mismatch(message)
}

// JSON text with every object's keys in order: objects are equal whatever their key order.
const canonical = (value) =>
  JSON.stringify(value, (_, v) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v
  )

function expectEq(actual, wanted, what) {
  const a = canonical(actual)
  const w = canonical(wanted)
  if (a !== w) throw new Mismatch(`${what}: expected ${w}, got ${a}`)
}

function describe(error) {
  if (error && error.name === 'HttpSdkError') {
    return `HTTP ${error.status} ${error.title ?? ''}: ${error.detail ?? error.message}`
  }
  if (error && error.name === 'ValidationSdkError') {
    return `the client's validation of ${error.operationId} (${error.side}): ${JSON.stringify(error.issues)}`
  }
  return String(error && error.stack ? error.stack : error)
}

// The call must fail as Camunda's REST API answers: an HttpSdkError carrying the problem's
// status, title, detail (mentioning `mentions`) and instance (the request path, when given).
async function expectProblem(call, { status, title, mentions, instance }, what) {
  let result
  try {
    result = await call()
  } catch (error) {
    if (error?.name !== 'HttpSdkError') {
      throw new Mismatch(`${what}: expected HTTP ${status} ${title}, got ${describe(error)}`)
    }
    const seen = `HTTP ${error.status} ${JSON.stringify({ title: error.title, detail: error.detail, instance: error.instance })}`
    expectEq(error.status, status, `${what}: status (${seen})`)
    expectEq(error.title, title, `${what}: title (${seen})`)
    expect(typeof error.detail === 'string' && error.detail.length > 0, `${what}: a detail, got ${seen}`)
    if (mentions) expect(error.detail.includes(mentions), `${what}: the detail should mention '${mentions}', got ${seen}`)
    if (instance) expectEq(error.instance, instance, `${what}: instance (${seen})`)
    return error
  }
  throw new Mismatch(`${what}: expected HTTP ${status} ${title}, but the call succeeded: ${JSON.stringify(result)}`)
}

async function check(name, body, timeoutMs = 30000) {
  checks++
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Mismatch(`no result within ${timeoutMs / 1000} s`)), timeoutMs)
  })
  const started = Date.now()
  try {
    await Promise.race([body(), timeout])
    console.log(`ok    ${name}`)
  } catch (error) {
    failures.push(name)
    const why = error instanceof Mismatch ? error.message : `unexpected ${describe(error)}`
    console.log(`FAIL  ${name}: ${why}`)
  } finally {
    clearTimeout(timer)
  }
  const took = Date.now() - started
  if (took > 5000) console.log(`      (took ${took} ms)`)
}

function skip(what, why) {
  skips++
  console.log(`skip  ${what}: ${why}`)
}

// ---- helpers --------------------------------------------------------------------------------

// Zeebe's keys carry their partition: key = partition << 51 | counter.
const partitionOf = (key) => Number(BigInt(key) >> 51n)
const allPartitions = () => Array.from({ length: PARTITIONS }, (_, i) => i + 1)
const sorted = (values) => [...new Set(values)].sort((a, b) => a - b)

// compat-task's job type and retries come from the instance's variables.
async function createTask(jobType, variables = {}) {
  return camunda.createProcessInstance({
    processDefinitionId: 'compat-task',
    variables: { jobType, retries: 3, ...variables },
  })
}

async function activate(type, { max = 1, waitMs = 10000, timeout = 60000 } = {}) {
  const { jobs } = await camunda.activateJobs({
    type,
    maxJobsToActivate: max,
    timeout,
    requestTimeout: waitMs,
    worker: 'oca-compat',
  })
  return jobs
}

async function activateOne(type, options = {}) {
  const jobs = await activate(type, { max: 1, ...options })
  expect(jobs.length === 1, `expected one job of type ${type}, got ${jobs.length}`)
  return jobs[0]
}

async function expectNone(type, waitMs, when) {
  const jobs = await activate(type, { max: 10, waitMs })
  expect(jobs.length === 0, `expected no job of type ${type} ${when}, got ${jobs.length}`)
}

const withResult = (body, requestTimeout = 20000) =>
  camunda.createProcessInstance({ ...body, awaitCompletion: true, requestTimeout })

// A few models beside the shared ones.
const inline = {
  'oca-timer.bpmn': `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="oca-timer-definitions"
    targetNamespace="http://beeline.test/compat">
  <bpmn:process id="oca-timer" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:sequenceFlow id="to-wait" sourceRef="start" targetRef="an-hour"/>
    <bpmn:intermediateCatchEvent id="an-hour">
      <bpmn:timerEventDefinition id="an-hour-def"><bpmn:timeDuration>PT1H</bpmn:timeDuration></bpmn:timerEventDefinition>
    </bpmn:intermediateCatchEvent>
    <bpmn:sequenceFlow id="to-end" sourceRef="an-hour" targetRef="end"/>
    <bpmn:endEvent id="end"/>
  </bpmn:process>
</bpmn:definitions>`,
  'oca-message-start.bpmn': `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="oca-message-start-definitions"
    targetNamespace="http://beeline.test/compat">
  <bpmn:message id="start-order" name="oca-start-order"/>
  <bpmn:process id="oca-message-start" isExecutable="true">
    <bpmn:startEvent id="ordered">
      <bpmn:messageEventDefinition id="ordered-def" messageRef="start-order"/>
    </bpmn:startEvent>
    <bpmn:sequenceFlow id="to-handle" sourceRef="ordered" targetRef="handle"/>
    <bpmn:serviceTask id="handle">
      <bpmn:extensionElements><zeebe:taskDefinition type="oca-message-started"/></bpmn:extensionElements>
    </bpmn:serviceTask>
    <bpmn:sequenceFlow id="to-end" sourceRef="handle" targetRef="end"/>
    <bpmn:endEvent id="end"/>
  </bpmn:process>
</bpmn:definitions>`,
  'oca-rule.bpmn': `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="oca-rule-definitions"
    targetNamespace="http://beeline.test/compat">
  <bpmn:process id="oca-rule" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:sequenceFlow id="to-decide" sourceRef="start" targetRef="decide"/>
    <bpmn:businessRuleTask id="decide">
      <bpmn:extensionElements>
        <zeebe:calledDecision decisionId="compat-discount" resultVariable="discount"/>
      </bpmn:extensionElements>
    </bpmn:businessRuleTask>
    <bpmn:sequenceFlow id="to-end" sourceRef="decide" targetRef="end"/>
    <bpmn:endEvent id="end"/>
  </bpmn:process>
</bpmn:definitions>`,
}

// The metrics of the node: REST calls per operation.
async function restCalls() {
  const text = await (await fetch(`${MONITORING}/metrics`)).text()
  const counts = {}
  for (const line of text.split('\n')) {
    const m = /^beeline_gateway_requests_total\{api="(\w+)",rpc="(\w+)",code="\w+"\} (\d+)$/.exec(line)
    if (m) counts[`${m[1]} ${m[2]}`] = (counts[`${m[1]} ${m[2]}`] ?? 0) + Number(m[3])
  }
  return counts
}

// ---- the checks -----------------------------------------------------------------------------

async function main() {
  const deployed = {}

  await check('topology: one broker, every partition led and healthy (lowercase roles)', async () => {
    const topology = await camunda.getTopology()
    expectEq(topology.brokers.length, 1, 'brokers')
    expectEq(topology.clusterSize, 1, 'cluster size')
    expectEq(topology.partitionsCount, PARTITIONS, 'partitions count')
    expectEq(topology.replicationFactor, 1, 'replication factor')
    expect(topology.gatewayVersion.length > 0, 'a gateway version')
    const [broker] = topology.brokers
    expectEq(broker.nodeId, 0, 'node id')
    expect(broker.port > 0 && broker.host.length > 0, `a broker address, got ${broker.host}:${broker.port}`)
    expectEq(
      broker.partitions.map((p) => [p.partitionId, p.role, p.health]).sort(),
      allPartitions().map((p) => [p, 'leader', 'healthy']),
      'partitions'
    )
  })

  await check('status: 204 when partitions are healthy', async () => {
    // getStatus resolves (to nothing) on 204 and throws on 503.
    expectEq(await camunda.getStatus(), undefined, 'status body')
  })

  await check('deploy: BPMN and DMN resources in one deployment', async () => {
    const files = ['task.bpmn', 'error.bpmn', 'message.bpmn', 'signal.bpmn', 'discount.dmn']
    const resources = [
      ...files.map((f) => new File([fs.readFileSync(path.join(MODELS, f))], f)),
      ...Object.entries(inline).map(([name, xml]) => new File([xml], name)),
    ]
    const result = await camunda.createDeployment({ resources })
    expect(/^[0-9]+$/.test(result.deploymentKey), `a deployment key, got ${result.deploymentKey}`)
    expectEq(result.tenantId, '<default>', 'tenant')
    const processes = Object.fromEntries(result.processes.map((p) => [p.processDefinitionId, p]))
    expectEq(
      Object.keys(processes).sort(),
      ['compat-error', 'compat-message', 'compat-signal', 'compat-task', 'oca-message-start', 'oca-rule', 'oca-timer'],
      'deployed processes'
    )
    for (const p of Object.values(processes)) {
      expectEq(p.processDefinitionVersion, 1, `version of ${p.processDefinitionId}`)
      expectEq(p.tenantId, '<default>', `tenant of ${p.processDefinitionId}`)
      deployed[p.processDefinitionId] = p.processDefinitionKey
    }
    expectEq(processes['compat-task'].resourceName, 'task.bpmn', 'resource name')
    expectEq(result.decisions.length, 1, 'decisions')
    const [decision] = result.decisions
    expectEq(
      [decision.decisionDefinitionId, decision.name, decision.version, decision.decisionRequirementsId],
      ['compat-discount', 'Discount', 1, 'compat-discounts'],
      'decision'
    )
    deployed.decision = decision.decisionDefinitionKey
    expectEq(result.decisionRequirements.length, 1, 'decision requirements')
    const [drg] = result.decisionRequirements
    expectEq(
      [drg.decisionRequirementsId, drg.decisionRequirementsName, drg.version, drg.resourceName],
      ['compat-discounts', 'Compat discounts', 1, 'discount.dmn'],
      'decision requirements'
    )
    expectEq(drg.decisionRequirementsKey, decision.decisionRequirementsKey, 'decision requirements key')
    // The same resources again keep their versions and keys.
    const again = await camunda.createDeployment({ resources })
    const task = again.processes.find((p) => p.processDefinitionId === 'compat-task')
    expectEq([task.processDefinitionVersion, task.processDefinitionKey], [1, deployed['compat-task']], 'unchanged process')
  })

  await check('deploy: an invalid BPMN is 400 INVALID_ARGUMENT naming the problem', async () => {
    const broken = fs.readFileSync(path.join(MODELS, 'broken.bpmn'))
    await expectProblem(
      () => camunda.createDeployment({ resources: [new File([broken], 'broken.bpmn')] }),
      { status: 400, title: 'INVALID_ARGUMENT', mentions: 'broken.bpmn', instance: '/v2/deployments' },
      'deploying broken.bpmn'
    )
  })

  await check('create: by process id (latest version) and by definition key, with tags', async () => {
    const created = await createTask('oca-create', { origin: 'create' })
    expectEq(
      [created.processDefinitionId, created.processDefinitionVersion, created.processDefinitionKey, created.tenantId],
      ['compat-task', 1, deployed['compat-task'], '<default>'],
      'created instance'
    )
    expect(/^[0-9]+$/.test(created.processInstanceKey), `an instance key, got ${created.processInstanceKey}`)
    await camunda.cancelProcessInstance({ processInstanceKey: created.processInstanceKey })
    const byKey = await camunda.createProcessInstance({
      processDefinitionKey: deployed['compat-task'],
      variables: { jobType: 'oca-create', retries: 1 },
      tags: ['compat', 'by-key'],
    })
    expectEq(byKey.processDefinitionId, 'compat-task', 'process of the instance created by key')
    expectEq([...byKey.tags].sort(), ['by-key', 'compat'], 'tags')
    await camunda.cancelProcessInstance({ processInstanceKey: byKey.processInstanceKey })
  })

  await check('job worker: completes jobs with variables on every partition', async () => {
    const handled = new Map()
    const worker = camunda.createJobWorker({
      jobType: 'oca-work',
      workerName: 'oca-worker',
      maxParallelJobs: 4,
      jobTimeoutMs: 60000,
      pollTimeoutMs: 5000,
      pollIntervalMs: 50,
      jobHandler: (job) => {
        handled.set(job.jobKey, job.worker)
        return job.complete({ doubled: job.variables.n * 2, by: job.worker })
      },
    })
    try {
      const results = await Promise.all(
        [1, 2, 3, 4].map((n) =>
          withResult({ processDefinitionId: 'compat-task', variables: { jobType: 'oca-work', retries: 3, n } })
        )
      )
      results.forEach((result, i) => {
        expectEq(result.variables.doubled, 2 * (i + 1), `doubled of instance n=${i + 1}`)
        expectEq(result.variables.by, 'oca-worker', 'worker name on the job')
      })
      expectEq(sorted(results.map((r) => partitionOf(r.processInstanceKey))), allPartitions(), 'partitions')
      expectEq(handled.size, 4, 'jobs handled')
    } finally {
      await worker.stopGracefully({ waitUpToMs: 2000 })
    }
  })

  await check('create with result: the variables, and fetchVariables limits them', async () => {
    const pending = withResult({
      processDefinitionId: 'compat-task',
      variables: { jobType: 'oca-result', retries: 1, a: 1, b: 2 },
      fetchVariables: ['b', 'done'],
    })
    const job = await activateOne('oca-result')
    await camunda.completeJob({ jobKey: job.jobKey, variables: { done: true, extra: 'x' } })
    const result = await pending
    expectEq(result.variables, { b: 2, done: true }, 'fetched variables')
    expectEq(result.processInstanceKey, job.processInstanceKey, 'instance key')
    const all = await withResult({ processDefinitionId: 'oca-rule', variables: { tier: 'gold', n: 1 } })
    expectEq(all.variables, { tier: 'gold', n: 1, discount: 0.2 }, 'every variable without fetchVariables')
  })

  await check('create with result: waiting past requestTimeout is 504 DEADLINE_EXCEEDED', async () => {
    await expectProblem(
      () => withResult({ processDefinitionId: 'compat-task', variables: { jobType: 'oca-never', retries: 1 } }, 1000),
      { status: 504, title: 'DEADLINE_EXCEEDED', instance: '/v2/process-instances' },
      'an instance that cannot finish in 1 s'
    )
    // The instance was created all the same.
    const job = await activateOne('oca-never')
    await camunda.completeJob({ jobKey: job.jobKey })
  })

  await check('complete: the job as a worker sees it, completing twice is 404 NOT_FOUND', async () => {
    const created = await createTask('oca-twice', { input: 'x' })
    const job = await activateOne('oca-twice')
    expectEq(
      [job.type, job.processDefinitionId, job.processDefinitionVersion, job.elementId, job.retries, job.worker, job.tenantId],
      ['oca-twice', 'compat-task', 1, 'work', 3, 'oca-compat', '<default>'],
      'job fields'
    )
    expectEq(job.processInstanceKey, created.processInstanceKey, 'instance of the job')
    expectEq(job.processDefinitionKey, deployed['compat-task'], 'process definition key of the job')
    expectEq(job.customHeaders, { suite: 'compat' }, 'custom headers')
    expectEq(job.variables, { jobType: 'oca-twice', retries: 3, input: 'x' }, 'variables')
    expectEq([job.kind, job.listenerEventType], ['BPMN_ELEMENT', 'UNSPECIFIED'], 'kind and listener event type')
    const untilDeadline = job.deadline - Date.now()
    expect(untilDeadline > 50000 && untilDeadline <= 61000, `deadline a minute ahead, got ${untilDeadline} ms`)
    expectEq(partitionOf(job.jobKey), partitionOf(created.processInstanceKey), 'partition of the job')
    await camunda.completeJob({ jobKey: job.jobKey, variables: { done: true } })
    await expectProblem(
      () => camunda.completeJob({ jobKey: job.jobKey }),
      { status: 404, title: 'NOT_FOUND', mentions: job.jobKey, instance: `/v2/jobs/${job.jobKey}/completion` },
      'completing the job again'
    )
  })

  await check('fail: retries decrease and the job comes back after its back-off', async () => {
    await createTask('oca-fail')
    let job = await activateOne('oca-fail')
    const failedAt = Date.now()
    await camunda.failJob({ jobKey: job.jobKey, retries: 2, retryBackOff: 2000, errorMessage: 'transient' })
    await expectNone('oca-fail', 500, 'during the 2 s back-off')
    job = await activateOne('oca-fail')
    const waited = Date.now() - failedAt
    expect(waited >= 1800, `the job came back after ${waited} ms, before its 2 s back-off`)
    expectEq(job.retries, 2, 'retries after the failure')
    await camunda.failJob({ jobKey: job.jobKey, retries: 1, errorMessage: 'again', variables: { tried: 2 } })
    job = await activateOne('oca-fail', { waitMs: 5000 })
    expectEq([job.retries, job.variables.tried], [1, 2], 'retries and the failure\'s variables')
    await camunda.completeJob({ jobKey: job.jobKey })
  })

  await check('incident: failing without retries, then update retries and resolve it', async () => {
    const created = await createTask('oca-incident')
    let job = await activateOne('oca-incident')
    await camunda.failJob({ jobKey: job.jobKey, retries: 0, errorMessage: 'permanent trouble' })
    await expectNone('oca-incident', 500, 'after failing with no retries')
    await camunda.updateJob({ jobKey: job.jobKey, changeset: { retries: 2 } })
    await expectNone('oca-incident', 500, 'with retries but the incident open')
    const incidentKey = await resolveIncidentOf(job, created.processInstanceKey)
    job = await activateOne('oca-incident')
    expectEq(job.retries, 2, 'retries of the job after the incident is resolved')
    await camunda.completeJob({ jobKey: job.jobKey })
    await expectProblem(
      () => camunda.resolveIncident({ incidentKey }),
      { status: 404, title: 'NOT_FOUND', mentions: incidentKey, instance: `/v2/incidents/${incidentKey}/resolution` },
      'resolving it again'
    )
  })

  await check('throw error: caught by the error boundary event', async () => {
    const pending = withResult({ processDefinitionId: 'compat-error', variables: { jobType: 'oca-risky' } })
    const job = await activateOne('oca-risky')
    await camunda.throwJobError({ jobKey: job.jobKey, errorCode: 'E42', errorMessage: 'out of stock', variables: { reason: 'stock' } })
    const handled = await activateOne('oca-risky-handled')
    expectEq(handled.variables.reason, 'stock', 'variable thrown with the error')
    await camunda.completeJob({ jobKey: handled.jobKey, variables: { recovered: true } })
    expectEq((await pending).variables.recovered, true, 'the instance took the error path')
  })

  await check('update job: retries and timeout, apart and at once', async () => {
    await createTask('oca-update')
    let job = await activateOne('oca-update', { timeout: 600000 })
    await camunda.updateJob({ jobKey: job.jobKey, changeset: { retries: 5 } })
    const updatedAt = Date.now()
    await camunda.updateJob({ jobKey: job.jobKey, changeset: { timeout: 1000 } })
    job = await activateOne('oca-update', { waitMs: 15000, timeout: 600000 })
    const waited = Date.now() - updatedAt
    expect(waited >= 800, `the job timed out after ${waited} ms, before its new 1 s timeout`)
    expectEq(job.retries, 5, 'retries after updating them and timing out')
    await camunda.updateJob({ jobKey: job.jobKey, changeset: { retries: 7, timeout: 1000 } })
    job = await activateOne('oca-update', { waitMs: 15000 })
    expectEq(job.retries, 7, 'retries after updating both at once')
    await camunda.completeJob({ jobKey: job.jobKey })
    await expectProblem(
      () => camunda.updateJob({ jobKey: '2251800813685249', changeset: { retries: 1 } }),
      { status: 404, title: 'NOT_FOUND', mentions: '2251800813685249', instance: '/v2/jobs/2251800813685249' },
      'updating an unknown job'
    )
  })

  await check('set variables: global and local scopes', async () => {
    const pending = withResult({ processDefinitionId: 'compat-task', variables: { jobType: 'oca-vars', retries: 3, existing: 0 } })
    let job = await activateOne('oca-vars')
    await camunda.createElementInstanceVariables({ elementInstanceKey: job.processInstanceKey, variables: { global: 'g' } })
    await camunda.createElementInstanceVariables({ elementInstanceKey: job.elementInstanceKey, variables: { local: 'l' }, local: true })
    await camunda.createElementInstanceVariables({
      elementInstanceKey: job.elementInstanceKey,
      variables: { existing: 1, propagated: 'p' },
      local: false,
    })
    await camunda.failJob({ jobKey: job.jobKey, retries: 1 })
    job = await activateOne('oca-vars')
    expectEq(
      [job.variables.global, job.variables.local, job.variables.propagated, job.variables.existing],
      ['g', 'l', 'p', 1],
      'variables seen by the job'
    )
    await camunda.completeJob({ jobKey: job.jobKey })
    const { variables } = await pending
    expectEq([variables.global, variables.propagated, variables.existing], ['g', 'p', 1], 'variables at the end')
    expect(!('local' in variables), `the local variable leaked to the process: ${JSON.stringify(variables)}`)
    await expectProblem(
      () => camunda.createElementInstanceVariables({ elementInstanceKey: job.processInstanceKey, variables: { late: 1 } }),
      { status: 404, title: 'NOT_FOUND', instance: `/v2/element-instances/${job.processInstanceKey}/variables` },
      'setting variables on a finished instance'
    )
  })

  await check('cancel: the instance and its job are gone, cancelling again is 404', async () => {
    const created = await createTask('oca-cancel')
    const job = await activateOne('oca-cancel')
    await camunda.cancelProcessInstance({ processInstanceKey: created.processInstanceKey })
    await expectProblem(() => camunda.completeJob({ jobKey: job.jobKey }), { status: 404, title: 'NOT_FOUND' }, 'completing its job')
    await expectProblem(
      () => camunda.cancelProcessInstance({ processInstanceKey: created.processInstanceKey }),
      {
        status: 404,
        title: 'NOT_FOUND',
        mentions: created.processInstanceKey,
        instance: `/v2/process-instances/${created.processInstanceKey}/cancellation`,
      },
      'cancelling again'
    )
  })

  await check('publish: messages correlate to waiting instances; a duplicate id is 409', async () => {
    const orders = allPartitions().flatMap((p) => [`oca-order-${p}a`, `oca-order-${p}b`])
    const pending = orders.map((orderId) => withResult({ processDefinitionId: 'compat-message', variables: { orderId } }))
    for (const [i, orderId] of orders.entries()) {
      const published = await camunda.publishMessage({
        name: 'compat-paid',
        correlationKey: orderId,
        timeToLive: 60000,
        messageId: `oca-payment-${orderId}`,
        variables: { paid: 10 * i },
      })
      expect(/^[0-9]+$/.test(published.messageKey), `a message key, got ${published.messageKey}`)
      expectEq(published.tenantId, '<default>', 'tenant')
    }
    const results = await Promise.all(pending)
    results.forEach((r, i) => expectEq(r.variables.paid, 10 * i, `paid of ${orders[i]}`))
    await expectProblem(
      () => camunda.publishMessage({ name: 'compat-paid', correlationKey: orders[0], timeToLive: 60000, messageId: `oca-payment-${orders[0]}` }),
      { status: 409, title: 'ALREADY_EXISTS', mentions: `oca-payment-${orders[0]}`, instance: '/v2/messages/publication' },
      'publishing the same message id again'
    )
  })

  await check('correlate: to a waiting instance and to a message start event; nobody waiting is 404', async () => {
    const pending = withResult({ processDefinitionId: 'compat-message', variables: { orderId: 'oca-correlated' } })
    let correlated
    const deadline = Date.now() + 10000
    while (!correlated) {
      try {
        correlated = await camunda.correlateMessage({ name: 'compat-paid', correlationKey: 'oca-correlated', variables: { paid: 77 } })
      } catch (error) {
        // Until the instance's subscription is open nothing takes the message (404).
        if (error?.status !== 404 || Date.now() > deadline) throw error
        await sleep(100)
      }
    }
    const result = await pending
    expectEq(correlated.processInstanceKey, result.processInstanceKey, 'the instance the message reached')
    expectEq(correlated.tenantId, '<default>', 'tenant')
    expect(/^[0-9]+$/.test(correlated.messageKey), `a message key, got ${correlated.messageKey}`)
    expectEq(result.variables.paid, 77, 'the message\'s variables')

    const started = await camunda.correlateMessage({ name: 'oca-start-order', correlationKey: '', variables: { item: 'book' } })
    const job = await activateOne('oca-message-started')
    expectEq(job.processInstanceKey, started.processInstanceKey, 'the instance the message started')
    expectEq(job.variables.item, 'book', 'the message\'s variables in the started instance')
    await camunda.completeJob({ jobKey: job.jobKey })

    await expectProblem(
      () => camunda.correlateMessage({ name: 'oca-nobody-waits', correlationKey: 'k' }),
      { status: 404, title: 'NOT_FOUND', mentions: 'oca-nobody-waits', instance: '/v2/messages/correlation' },
      'correlating a message nobody waits for'
    )
  })

  await check('signal: a broadcast continues the instances waiting on every partition', async () => {
    const pending = allPartitions().flatMap(() => [0, 1]).map((i) => withResult({ processDefinitionId: 'compat-signal', variables: { waiter: i } }))
    await sleep(500) // a signal is not buffered: let the instances reach their catch events
    const signal = await camunda.broadcastSignal({ signalName: 'compat-go', variables: { go: 7 } })
    expect(/^[0-9]+$/.test(signal.signalKey), `a signal key, got ${signal.signalKey}`)
    expectEq(signal.tenantId, '<default>', 'tenant')
    const results = await Promise.all(pending)
    results.forEach((r) => expectEq(r.variables.go, 7, 'the signal\'s variable'))
    expectEq(sorted(results.map((r) => partitionOf(r.processInstanceKey))), allPartitions(), 'partitions')
  })

  await check('decision: evaluate by id and by key, and in a business rule task', async () => {
    // Read without the client's response validation: its schema (8.8.4) types each evaluated
    // decision's decisionEvaluationInstanceKey as a plain key and requires a non-empty
    // failedDecisionDefinitionId, while Camunda 8.8's engine writes "<evaluation key>-<n>" and
    // the later 8.8 specification says so (DecisionEvaluationInstanceKey, ^[0-9]+-[0-9]+$), and
    // a successful evaluation has no failed decision. The fields are checked here instead.
    const result = await unchecked.evaluateDecision({ decisionDefinitionId: 'compat-discount', variables: { tier: 'gold' } })
    expectEq(
      [result.decisionDefinitionId, result.decisionDefinitionName, result.decisionDefinitionVersion, result.decisionRequirementsId],
      ['compat-discount', 'Discount', 1, 'compat-discounts'],
      'decision'
    )
    expectEq([result.decisionDefinitionKey, result.tenantId], [deployed.decision, '<default>'], 'key and tenant')
    expectEq(JSON.parse(result.output), 0.2, 'output')
    expectEq([result.failedDecisionDefinitionId, result.failureMessage], ['', ''], 'no failure')
    expect(/^[0-9]+$/.test(result.decisionEvaluationKey), `an evaluation key, got ${result.decisionEvaluationKey}`)
    expect(/^[0-9]+$/.test(result.decisionRequirementsKey), `a requirements key, got ${result.decisionRequirementsKey}`)
    expectEq(result.evaluatedDecisions.length, 1, 'evaluated decisions')
    const [evaluated] = result.evaluatedDecisions
    expectEq(evaluated.decisionEvaluationInstanceKey, `${result.decisionEvaluationKey}-1`, 'evaluation instance key')
    expectEq(
      [evaluated.decisionDefinitionId, evaluated.decisionDefinitionType, evaluated.decisionDefinitionKey, JSON.parse(evaluated.output)],
      ['compat-discount', 'DECISION_TABLE', deployed.decision, 0.2],
      'evaluated decision'
    )
    expectEq(evaluated.evaluatedInputs, [{ inputId: 'tier-input', inputName: 'Tier', inputValue: '"gold"' }], 'inputs')
    expectEq(evaluated.matchedRules.map((r) => [r.ruleId, r.ruleIndex]), [['gold', 1]], 'matched rules')
    const [output] = evaluated.matchedRules[0].evaluatedOutputs
    expectEq([output.outputId, output.outputName, output.outputValue], ['discount-output', 'discount', '0.2'], 'rule output')

    const byKey = await unchecked.evaluateDecision({ decisionDefinitionKey: deployed.decision, variables: { tier: 'silver' } })
    expectEq(JSON.parse(byKey.output), 0.1, 'output by key')
    const rule = await withResult({ processDefinitionId: 'oca-rule', variables: { tier: 'nobody' } })
    expectEq(rule.variables.discount, 0, 'discount from the business rule task')
  })

  await check('decision: an unknown decision is 404', async () => {
    await expectProblem(
      () => unchecked.evaluateDecision({ decisionDefinitionId: 'oca-no-such-decision', variables: {} }),
      { status: 404, title: 'NOT_FOUND', mentions: 'oca-no-such-decision', instance: '/v2/decision-definitions/evaluation' },
      'evaluating an unknown decision'
    )
  })

  await check('errors: an unknown process, variables not an object, a key that is no key', async () => {
    await expectProblem(
      () => camunda.createProcessInstance({ processDefinitionId: 'oca-no-such-process' }),
      { status: 404, title: 'NOT_FOUND', mentions: 'oca-no-such-process', instance: '/v2/process-instances' },
      'creating an unknown process'
    )
    // What the client's request validation refuses, sent without it.
    await expectProblem(
      () => unchecked.createProcessInstance({ processDefinitionId: 'compat-task', variables: [1, 2, 3] }),
      { status: 400, title: 'INVALID_ARGUMENT', mentions: 'variables', instance: '/v2/process-instances' },
      'variables that are an array'
    )
    await expectProblem(
      () => unchecked.completeJob({ jobKey: 'not-a-key' }),
      { status: 400, title: 'INVALID_ARGUMENT', mentions: 'not-a-key', instance: '/v2/jobs/not-a-key/completion' },
      'a job key that is not a number'
    )
    await expectProblem(
      () => unchecked.activateJobs({ type: 'oca-x', timeout: 1000 }),
      { status: 400, title: 'INVALID_ARGUMENT', mentions: 'maxJobsToActivate', instance: '/v2/jobs/activation' },
      'activation without maxJobsToActivate'
    )
    await camunda.getTopology() // the node serves on
  })

  await check('variables: random doubles and safe integers come back exactly (create, job, complete, result)', async () => {
    // JavaScript numbers are doubles: integers beyond 2^53 cannot be held, so the integers here
    // stop at Number.MAX_SAFE_INTEGER.
    const buffer = new DataView(new ArrayBuffer(8))
    const doubles = Array.from({ length: 100 }, () => Math.random())
    while (doubles.length < 200) {
      buffer.setUint32(0, (Math.random() * 2 ** 32) >>> 0)
      buffer.setUint32(4, (Math.random() * 2 ** 32) >>> 0)
      const d = buffer.getFloat64(0)
      if (Number.isFinite(d)) doubles.push(d)
    }
    const integers = [Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 2 ** 53 - 2, -(2 ** 31), Math.floor(Math.random() * 2 ** 53)]
    const same = (what, got) => {
      expectEq(got.doubles.length, doubles.length, `${what}: count`)
      got.doubles.forEach((d, i) => {
        if (!Object.is(d, doubles[i])) throw new Mismatch(`${what}: double ${i} went in as ${doubles[i]} and came back as ${d}`)
      })
      expectEq(got.integers, integers, `${what}: integers`)
    }
    const pending = withResult({ processDefinitionId: 'compat-task', variables: { jobType: 'oca-numbers', retries: 1, doubles, integers } })
    const job = await activateOne('oca-numbers')
    same('the activated job', job.variables)
    await camunda.completeJob({ jobKey: job.jobKey, variables: { back: { doubles: job.variables.doubles, integers: job.variables.integers } } })
    const { variables } = await pending
    same('the instance\'s result', variables)
    same('the completed job\'s variables in the result', variables.back)
  })

  await check('clock: pinned, a timer fires and deadlines follow it; reset', async () => {
    const pending = withResult({ processDefinitionId: 'oca-timer' }, 20000)
    let settled = false
    pending.then(() => { settled = true }, () => { settled = true })
    await sleep(300)
    expect(!settled, 'the one-hour timer fired at once')
    const pinned = Math.floor(Date.now() / 1000) * 1000 + 2 * 3600 * 1000
    await camunda.pinClock({ timestamp: pinned })
    try {
      const result = await pending
      expectEq(result.processDefinitionId, 'oca-timer', 'the timer\'s instance completed')
      await createTask('oca-clock')
      const job = await activateOne('oca-clock')
      expectEq(job.deadline, pinned + 60000, 'deadline of a job activated with a one-minute timeout')
      await camunda.completeJob({ jobKey: job.jobKey })
    } finally {
      await camunda.resetClock()
    }
    await createTask('oca-clock')
    const job = await activateOne('oca-clock')
    const untilDeadline = job.deadline - Date.now()
    expect(untilDeadline > 50000 && untilDeadline <= 61000, `after the reset the deadline is a minute ahead, got ${untilDeadline} ms`)
    await camunda.completeJob({ jobKey: job.jobKey })
  })

  await check('metrics: every call went over REST', async () => {
    const counts = await restCalls()
    const operations = [
      'Topology', 'DeployResource', 'CreateProcessInstance', 'ActivateJobs', 'CompleteJob', 'FailJob', 'ThrowError',
      'UpdateJob', 'SetVariables', 'ResolveIncident', 'CancelProcessInstance', 'PublishMessage', 'CorrelateMessage',
      'BroadcastSignal', 'EvaluateDecision', 'PinClock', 'ResetClock',
    ]
    for (const op of operations) expect(counts[`rest ${op}`] > 0, `no REST ${op} call in the node's metrics: ${JSON.stringify(counts)}`)
    const grpc = Object.keys(counts).filter((k) => k.startsWith('grpc '))
    expectEq(grpc, [], 'gRPC calls')
  })

  camunda.stopAllWorkers()
  const skipped = skips > 0 ? ` (${skips} skipped)` : ''
  if (failures.length > 0) {
    console.log(`${failures.length} of ${checks} Orchestration Cluster API check(s) failed${skipped}`)
    return 1
  }
  console.log(`all ${checks} Orchestration Cluster API checks passed${skipped}`)
  return 0
}

// Resolves the incident of a job that failed without retries and returns its key, found as a
// user finds it: through the incident search. Where Beeline does not serve that search yet
// (501), the suite says so ("skip") and finds it as the gRPC suites do: keys on a partition are
// a counter and the incident is created on the job's partition after the job, so it is among
// the keys after the job's; resolving the others answers 404.
async function resolveIncidentOf(job, processInstanceKey) {
  try {
    const found = await camunda.searchIncidents(
      { filter: { processInstanceKey } },
      { consistency: { waitUpToMs: 10000, pollIntervalMs: 200 } }
    )
    expectEq(found.items.length, 1, 'incidents of the instance')
    const [incident] = found.items
    expectEq([incident.jobKey, incident.elementId, incident.errorMessage], [job.jobKey, 'work', 'permanent trouble'], 'incident')
    await camunda.resolveIncident({ incidentKey: incident.incidentKey })
    return incident.incidentKey
  } catch (error) {
    if (error?.status !== 501) throw error
    skip('incident search (POST /v2/incidents/search)', `Beeline answers 501 (${error.detail}); the incident is found by resolving the keys after the job's`)
  }
  const jobKey = BigInt(job.jobKey)
  for (let candidate = jobKey + 1n; candidate <= jobKey + 200n; candidate++) {
    try {
      await camunda.resolveIncident({ incidentKey: String(candidate) })
      return String(candidate)
    } catch (error) {
      if (error?.status !== 404) throw error
    }
  }
  throw new Mismatch(`no incident among the 200 keys after the job's key ${job.jobKey}`)
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.log(`FAIL  ${describe(error)}`)
    process.exit(1)
  }
)
