// @camunda8/sdk (the official Node SDK) against a running Beeline node, through its Zeebe gRPC
// client: every RPC of the client's API that Beeline implements.
//
// Run by run.sh, which starts the node and sets ZEEBE_GRPC_ADDRESS and CAMUNDA_AUTH_STRATEGY.
// Prints "ok    <check>" or "FAIL  <check>: <why>" per check; exits 1 if any check failed.
//
// Not checked: MigrateProcessInstance, which Beeline answers UNIMPLEMENTED (README, "Status");
// the suite prints what it answers, as "skip".
'use strict'

const fs = require('fs')
const path = require('path')
const { Camunda8 } = require('@camunda8/sdk')

const MODELS = path.join(__dirname, '..', 'models') // shared with compat/python
const PARTITIONS = Number(process.env.BEELINE_PARTITIONS || '2')
// grpc status codes
const Code = {
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  FAILED_PRECONDITION: 9,
  INVALID_ARGUMENT: 3,
  UNIMPLEMENTED: 12,
}
const codeName = (code) =>
  Object.entries(Code).find(([, n]) => n === code)?.[0] ?? `code ${code}`

class Mismatch extends Error {}

const failures = []
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

function expect(condition, message) {
  if (!condition) throw new Mismatch(message)
}

function expectEq(actual, wanted, what) {
  const a = JSON.stringify(actual)
  const w = JSON.stringify(wanted)
  if (a !== w) throw new Mismatch(`${what}: expected ${w}, got ${a}`)
}

// The call must fail with the gRPC status `code`; returns the error.
async function expectCode(code, call, what) {
  let result
  try {
    result = await call
  } catch (error) {
    if (error.code === code) return error
    throw new Mismatch(`${what}: expected ${codeName(code)}, got ${describe(error)}`)
  }
  throw new Mismatch(
    `${what}: expected ${codeName(code)}, but the call succeeded: ${JSON.stringify(result)}`
  )
}

function describe(error) {
  if (error && typeof error.code === 'number') {
    return `${codeName(error.code)}: ${error.details ?? error.message}`
  }
  return String(error && error.stack ? error.stack : error)
}

async function check(name, body, timeoutMs = 30000) {
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(
      () => reject(new Mismatch(`no result within ${timeoutMs / 1000} s`)),
      timeoutMs
    )
  })
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
}

// The SDK's stream worker prints every stream error with console.error, including the
// CANCELLED that closing a stream on purpose causes; leave that one out of the output.
const consoleError = console.error
console.error = (...args) => {
  if (args[0] && args[0].code === 1 && args[0].details === 'Cancelled on client') return
  consoleError(...args)
}

const partitionOf = (key) => Number(BigInt(key) >> 51n)

async function main() {
  const c8 = new Camunda8()
  const zbc = c8.getZeebeGrpcApiClient()
  // The SDK retries DEADLINE_EXCEEDED (and RESOURCE_EXHAUSTED, UNAVAILABLE) forever by
  // default; the check that expects DEADLINE_EXCEEDED uses a client that does not retry.
  const noRetry = c8.getZeebeGrpcApiClient({
    zeebeGrpcSettings: { ZEEBE_GRPC_CLIENT_RETRY: false },
  })
  const workers = []

  // ---- cluster -----------------------------------------------------------------------------
  await check('topology: one broker leading every partition, healthy', async () => {
    const top = await zbc.topology()
    expectEq(top.clusterSize, 1, 'cluster size')
    expectEq(top.partitionsCount, PARTITIONS, 'partitions count')
    expectEq(top.replicationFactor, 1, 'replication factor')
    expectEq(top.brokers.length, 1, 'brokers')
    const [broker] = top.brokers
    expect(broker.host !== '' && broker.port > 0, `broker address ${broker.host}:${broker.port}`)
    expect(top.gatewayVersion !== '', 'gateway version is empty')
    const partitions = broker.partitions.map((p) => p.partitionId).sort()
    expectEq(partitions, [...Array(PARTITIONS).keys()].map((i) => i + 1), 'partition ids')
    for (const p of broker.partitions) {
      expectEq(p.role, 'LEADER', `partition ${p.partitionId} role`)
      expectEq(p.health, 'HEALTHY', `partition ${p.partitionId} health`)
    }
  })

  // ---- deployment --------------------------------------------------------------------------
  const deployed = {}
  const bpmn = (file) => ({ name: file, process: fs.readFileSync(path.join(MODELS, file)) })
  await check('deploy: four processes and a DMN in one deployment', async () => {
    const response = await zbc.deployResources([
      bpmn('task.bpmn'),
      bpmn('error.bpmn'),
      bpmn('message.bpmn'),
      bpmn('signal.bpmn'),
      { name: 'discount.dmn', decision: fs.readFileSync(path.join(MODELS, 'discount.dmn')) },
    ])
    expect(BigInt(response.key) > 0n, `deployment key ${response.key}`)
    for (const d of response.deployments) {
      if (d.process) deployed[d.process.bpmnProcessId] = d.process
      if (d.decision) deployed[d.decision.dmnDecisionId] = d.decision
      if (d.decisionRequirements) {
        deployed[`drg:${d.decisionRequirements.dmnDecisionRequirementsId}`] = d.decisionRequirements
      }
    }
    for (const [id, file] of [
      ['compat-task', 'task.bpmn'],
      ['compat-error', 'error.bpmn'],
      ['compat-message', 'message.bpmn'],
      ['compat-signal', 'signal.bpmn'],
    ]) {
      expect(deployed[id], `no process ${id} in ${JSON.stringify(response.deployments)}`)
      expectEq(deployed[id].version, 1, `${id} version`)
      expectEq(deployed[id].resourceName, file, `${id} resource name`)
      expectEq(deployed[id].tenantId, '<default>', `${id} tenant`)
    }
    const decision = deployed['compat-discount']
    expect(decision, `no decision in ${JSON.stringify(response.deployments)}`)
    expectEq(decision.dmnDecisionName, 'Discount', 'decision name')
    const drg = deployed['drg:compat-discounts']
    expect(drg, 'no decision requirements in the deployment')
    expectEq(drg.decisionRequirementsKey, decision.decisionRequirementsKey, 'DRG key')
  })
  if (!deployed['compat-task']) {
    console.log('FAIL  nothing else can run without the deployment')
    return 1
  }

  await check('deploy: an invalid BPMN is INVALID_ARGUMENT', async () => {
    await expectCode(
      Code.INVALID_ARGUMENT,
      zbc.deployResource(bpmn('broken.bpmn')),
      'deploying a flow to a missing element'
    )
  })

  // ---- instances ---------------------------------------------------------------------------
  await check('create instance: latest version, spread over every partition', async () => {
    const seen = new Set()
    for (let i = 0; i < 2 * PARTITIONS; i++) {
      const created = await zbc.createProcessInstance({
        bpmnProcessId: 'compat-message',
        variables: { orderId: 'never-paid' },
      })
      expectEq(created.bpmnProcessId, 'compat-message', 'process id')
      expectEq(created.version, 1, 'version')
      expectEq(created.processDefinitionKey, deployed['compat-message'].processDefinitionKey, 'definition key')
      seen.add(partitionOf(created.processInstanceKey))
    }
    expectEq([...seen].sort(), [...Array(PARTITIONS).keys()].map((i) => i + 1), 'partitions of the keys')
  })

  await check('create instance: unknown process is NOT_FOUND', async () => {
    const error = await expectCode(
      Code.NOT_FOUND,
      zbc.createProcessInstance({ bpmnProcessId: 'no-such-process', variables: {} }),
      'creating an instance of an unknown process'
    )
    expect(error.details.includes("'no-such-process'"), `message names the process: ${error.details}`)
  })

  // Non-object variables cannot be sent with this SDK: it refuses an array itself and turns a
  // number or string into "{}". Invalid variables are checked with setVariables below.

  await check('cancel instance; cancelling it again is NOT_FOUND', async () => {
    const created = await zbc.createProcessInstance({
      bpmnProcessId: 'compat-message',
      variables: { orderId: 'cancelled' },
    })
    await zbc.cancelProcessInstance(created.processInstanceKey)
    await expectCode(
      Code.NOT_FOUND,
      zbc.cancelProcessInstance(created.processInstanceKey),
      'cancelling the same instance again'
    )
  })

  await check('create with result: DEADLINE_EXCEEDED after its request timeout', async () => {
    await expectCode(
      Code.DEADLINE_EXCEEDED,
      noRetry.createProcessInstanceWithResult({
        bpmnProcessId: 'compat-message',
        variables: { orderId: 'late' },
        requestTimeout: 1000,
      }),
      'waiting 1 s for an instance that waits for a message'
    )
  })

  // ---- workers -----------------------------------------------------------------------------
  const polled = []
  workers.push(
    zbc.createWorker({
      taskType: 'node-poll',
      timeout: 30000,
      taskHandler: (job) => {
        polled.push(job)
        return job.complete({ doubled: job.variables.x * 2, note: 'done by the Node SDK' })
      },
    })
  )

  await check('worker (polling) completes a job; create with result returns its variables', async () => {
    const result = await zbc.createProcessInstanceWithResult({
      bpmnProcessId: 'compat-task',
      variables: { jobType: 'node-poll', retries: 3, x: 21 },
    })
    expectEq(result.variables.doubled, 42, 'variable the worker completed with')
    expectEq(result.variables.note, 'done by the Node SDK', 'string variable')
    expectEq(polled.length, 1, 'jobs the worker got')
    const [job] = polled
    expectEq(job.processInstanceKey, result.processInstanceKey, "job's instance key")
    expectEq(job.bpmnProcessId, 'compat-task', "job's process id")
    expectEq(job.elementId, 'work', "job's element id")
    expectEq(job.retries, 3, "job's retries")
    expectEq({ ...job.customHeaders }, { suite: 'compat' }, "job's custom headers")
    expectEq(job.variables.x, 21, "job's variable x")
    expect(Number(job.deadline) > Date.now(), `job deadline ${job.deadline} is in the past`)
  })

  const fetched = []
  workers.push(
    zbc.createWorker({
      taskType: 'node-fetch',
      fetchVariable: ['x'],
      taskHandler: (job) => {
        fetched.push(job)
        return job.complete({})
      },
    })
  )
  await check('worker with fetchVariable gets only those variables', async () => {
    await zbc.createProcessInstanceWithResult({
      bpmnProcessId: 'compat-task',
      variables: { jobType: 'node-fetch', retries: 3, x: 1, y: 2 },
    })
    expectEq(fetched.length, 1, 'jobs the worker got')
    expectEq({ ...fetched[0].variables }, { x: 1 }, "the job's variables")
  })

  const numbered = []
  workers.push(
    zbc.createWorker({
      taskType: 'node-numbers',
      taskHandler: (job) => {
        numbered.push(job)
        return job.complete({ doublesBack: job.variables.doubles, intsBack: job.variables.ints })
      },
    })
  )
  await check(
    'variables: 300 random doubles and large integers come back exactly (create, job, complete, result)',
    async () => {
      // 200 random doubles in [0, 1) (ids, amounts), 100 of any exponent (random bit
      // patterns) below 2^53, and the largest integers a JS number holds exactly; compared
      // as JS numbers with Object.is (JSON itself has no -0 in JS: JSON.stringify writes 0).
      // The SDK refuses to read any number of 2^53 or more ("An unsafe number value was
      // received ... and no Dto mapping was specified"): every double that large is whole
      // and beyond Number.MAX_SAFE_INTEGER, so such doubles are left out here.
      const doubles = []
      while (doubles.length < 200) doubles.push(Math.random())
      const bits = new DataView(new ArrayBuffer(8))
      while (doubles.length < 300) {
        for (let i = 0; i < 8; i++) bits.setUint8(i, Math.floor(Math.random() * 256))
        const d = bits.getFloat64(0)
        if (Number.isFinite(d) && Math.abs(d) < 2 ** 53) doubles.push(d === 0 ? 0 : d)
      }
      const ints = [Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 2 ** 52 + 1, -(2 ** 52 + 1)]
      const same = (what, gotDoubles, gotInts) => {
        expect(Array.isArray(gotDoubles), `${what}: doubles are ${JSON.stringify(gotDoubles)}`)
        expectEq(gotDoubles.length, doubles.length, `${what}: count of doubles`)
        doubles.forEach((sent, i) => {
          expect(
            Object.is(gotDoubles[i], sent),
            `${what}: double ${i} went in as ${sent} and came back as ${gotDoubles[i]}`
          )
        })
        expectEq(gotInts, ints, `${what}: integers`)
      }
      const result = await zbc.createProcessInstanceWithResult({
        bpmnProcessId: 'compat-task',
        variables: { jobType: 'node-numbers', retries: 3, doubles, ints },
      })
      expectEq(numbered.length, 1, 'jobs the worker got')
      same("the job's variables", numbered[0].variables.doubles, numbered[0].variables.ints)
      same("the instance's result", result.variables.doubles, result.variables.ints)
      same(
        "the completed job's variables in the result",
        result.variables.doublesBack,
        result.variables.intsBack
      )
    }
  )

  await check('create with result: fetchVariables limits the result', async () => {
    const result = await zbc.createProcessInstanceWithResult({
      bpmnProcessId: 'compat-task',
      variables: { jobType: 'node-poll', retries: 3, x: 5 },
      fetchVariables: ['doubled'],
    })
    expectEq(result.variables, { doubled: 10 }, 'only the fetched variable')
  })

  await check('worker (streamJobs) gets jobs pushed by the stream', async () => {
    const streamed = []
    // pollInterval 0: no periodic poll next to the stream. The SDK polls once while opening
    // the stream (nothing to find yet), so the job created afterwards can only be streamed.
    const stream = await zbc.streamJobs({
      type: 'node-stream',
      worker: 'node-streamer',
      timeout: 30000,
      pollInterval: 0,
      taskHandler: (job) => {
        streamed.push(job)
        return job.complete({ streamed: job.variables.x + 1 })
      },
    })
    try {
      await sleep(300)
      const result = await zbc.createProcessInstanceWithResult({
        bpmnProcessId: 'compat-task',
        variables: { jobType: 'node-stream', retries: 3, x: 1 },
      })
      expectEq(result.variables.streamed, 2, 'variable the stream worker set')
      expectEq(streamed.length, 1, 'streamed jobs')
      expectEq(streamed[0].worker, 'node-streamer', "streamed job's worker")
    } finally {
      stream.close()
    }
  })

  // Creates an instance of compat-task with a job of `jobType` and activates that job.
  async function activatedJob(jobType, retries, timeout = 30000) {
    const created = await zbc.createProcessInstance({
      bpmnProcessId: 'compat-task',
      variables: { jobType, retries },
    })
    const jobs = await zbc.activateJobs({
      type: jobType,
      worker: 'node-activator',
      maxJobsToActivate: 5,
      timeout,
      requestTimeout: 10000,
    })
    expectEq(jobs.length, 1, `jobs of type ${jobType} activated`)
    expectEq(jobs[0].processInstanceKey, created.processInstanceKey, 'instance of the job')
    return { created, job: jobs[0] }
  }

  // Activates jobs of `jobType` without waiting (requestTimeout -1) or waiting `waitMs`.
  const activate = (jobType, waitMs = -1) =>
    zbc.activateJobs({
      type: jobType,
      worker: 'node-activator',
      maxJobsToActivate: 5,
      timeout: 30000,
      requestTimeout: waitMs,
    })

  await check('fail with retries and back-off: the job comes back after the back-off', async () => {
    const { job } = await activatedJob('node-retry', 3)
    const failedAt = Date.now()
    await zbc.failJob({ jobKey: job.key, retries: 2, errorMessage: 'try again', retryBackOff: 1500 })
    expectEq((await activate('node-retry')).length, 0, 'jobs activatable during the back-off')
    const [again] = await activate('node-retry', 10000)
    expect(again, 'the job did not come back within 10 s')
    const gap = Date.now() - failedAt
    expectEq(again.key, job.key, 'key of the retried job')
    expectEq(again.retries, 2, 'retries after one failure')
    expect(gap >= 1400, `the job came back after ${gap} ms, before its 1500 ms back-off`)
    await zbc.completeJob({ jobKey: again.key, variables: {} })
  })

  await check('fail to 0 retries: incident; update retries + resolve it: activatable again', async () => {
    const { job } = await activatedJob('node-incident', 1)
    await zbc.failJob({ jobKey: job.key, retries: 0, errorMessage: 'no retries left', retryBackOff: 0 })
    expectEq((await activate('node-incident')).length, 0, 'jobs activatable with an incident')
    // Zeebe refuses to complete a failed job: INVALID_STATE, answered FAILED_PRECONDITION.
    await expectCode(
      Code.FAILED_PRECONDITION,
      zbc.completeJob({ jobKey: job.key, variables: {} }),
      'completing a job that failed with no retries left'
    )
    await zbc.updateJobRetries({ jobKey: job.key, retries: 3 })
    expectEq(
      (await activate('node-incident')).length,
      0,
      'jobs activatable after updating retries, before resolving the incident'
    )
    // The gRPC API never tells a client an incident's key (Operate and the REST API do). Keys
    // on a partition are sequential, and the incident is created after the job, so the suite
    // tries the keys that follow the job's key until ResolveIncident accepts one; every other
    // key answers NOT_FOUND.
    let resolved = null
    for (let key = BigInt(job.key) + 1n; key <= BigInt(job.key) + 200n && !resolved; key++) {
      try {
        await zbc.resolveIncident({ incidentKey: key.toString() })
        resolved = key
      } catch (error) {
        if (error.code !== Code.NOT_FOUND) throw error
      }
    }
    expect(resolved, `no incident among the 200 keys after the job's key ${job.key}`)
    const [again] = await activate('node-incident', 5000)
    expect(again, 'the job was not activatable after resolving its incident')
    expectEq(again.key, job.key, 'key of the job')
    expectEq(again.retries, 3, 'retries of the job (as updated)')
    await zbc.completeJob({ jobKey: again.key, variables: {} })
  })

  await check('resolve incident: unknown incident is NOT_FOUND', async () => {
    await expectCode(
      Code.NOT_FOUND,
      zbc.resolveIncident({ incidentKey: ((1n << 51n) + 999999n).toString() }),
      'resolving an unknown incident'
    )
  })

  await check('update retries: negative retries are INVALID_ARGUMENT', async () => {
    await expectCode(
      Code.INVALID_ARGUMENT,
      zbc.updateJobRetries({ jobKey: ((1n << 51n) + 1n).toString(), retries: -1 }),
      'updating retries to -1'
    )
  })

  const errored = []
  workers.push(
    zbc.createWorker({
      taskType: 'node-error',
      taskHandler: (job) => {
        errored.push(job)
        return job.error({ errorCode: 'E42', errorMessage: 'out of stock', variables: { reason: 'stock' } })
      },
    }),
    zbc.createWorker({
      taskType: 'node-error-handled',
      taskHandler: (job) => job.complete({ handled: true, reasonSeen: job.variables.reason }),
    })
  )
  await check('throw error: caught by the error boundary event, with its variables', async () => {
    const result = await zbc.createProcessInstanceWithResult({
      bpmnProcessId: 'compat-error',
      variables: { jobType: 'node-error' },
    })
    expectEq(result.variables.handled, true, 'the error path ran')
    expectEq(result.variables.reasonSeen, 'stock', 'variable thrown with the error, seen by the handler')
    expectEq(errored.length, 1, 'activations of the failing job')
  })

  await check('throw error: unknown job is NOT_FOUND', async () => {
    await expectCode(
      Code.NOT_FOUND,
      zbc.throwError({ jobKey: ((1n << 51n) + 999999n).toString(), errorCode: 'E42', errorMessage: '' }),
      'throwing an error for an unknown job'
    )
  })

  await check('update job timeout: a shortened timeout makes the job activatable again', async () => {
    const { job } = await activatedJob('node-timeout', 3, 60000)
    await zbc.updateJobTimeout({ jobKey: job.key, timeout: 1000 })
    const started = Date.now()
    const [again] = await activate('node-timeout', 15000)
    expect(again, 'the job did not time out within 15 s of a 1 s timeout')
    expectEq(again.key, job.key, 'key of the timed-out job')
    expect(Date.now() - started < 14000, 'the timed-out job came back only at the end of the long poll')
    await zbc.completeJob({ jobKey: again.key, variables: {} })
  })

  await check('update job timeout: unknown job is NOT_FOUND', async () => {
    await expectCode(
      Code.NOT_FOUND,
      zbc.updateJobTimeout({ jobKey: ((1n << 51n) + 999999n).toString(), timeout: 1000 }),
      'updating the timeout of an unknown job'
    )
  })

  await check('complete job: unknown job is NOT_FOUND', async () => {
    await expectCode(
      Code.NOT_FOUND,
      zbc.completeJob({ jobKey: ((1n << 51n) + 999999n).toString(), variables: {} }),
      'completing an unknown job'
    )
  })

  await check('set variables: visible to the job activated afterwards', async () => {
    const created = await zbc.createProcessInstance({
      bpmnProcessId: 'compat-task',
      variables: { jobType: 'node-vars', retries: 3, before: 1 },
    })
    await zbc.setVariables({
      elementInstanceKey: created.processInstanceKey,
      variables: { added: 'by setVariables', before: 2 },
      local: false,
    })
    const [job] = await activate('node-vars', 10000)
    expect(job, 'no job')
    expectEq(job.variables.added, 'by setVariables', 'the set variable')
    expectEq(job.variables.before, 2, 'the overwritten variable')
    await zbc.completeJob({ jobKey: job.key, variables: {} })
  })

  await check('set variables: unknown scope is NOT_FOUND, non-object INVALID_ARGUMENT', async () => {
    await expectCode(
      Code.NOT_FOUND,
      zbc.setVariables({
        elementInstanceKey: ((1n << 51n) + 999999n).toString(),
        variables: { a: 1 },
        local: false,
      }),
      'setting variables of an unknown element instance'
    )
    const created = await zbc.createProcessInstance({
      bpmnProcessId: 'compat-message',
      variables: { orderId: 'vars' },
    })
    await expectCode(
      Code.INVALID_ARGUMENT,
      zbc.setVariables({ elementInstanceKey: created.processInstanceKey, variables: [1], local: false }),
      'setting variables to a JSON array'
    )
    await zbc.cancelProcessInstance(created.processInstanceKey)
  })

  // ---- messages and signals ----------------------------------------------------------------
  await check('publish message: correlated to a waiting instance; duplicate id ALREADY_EXISTS', async () => {
    const waiting = zbc.createProcessInstanceWithResult({
      bpmnProcessId: 'compat-message',
      variables: { orderId: 'order-node-1' },
    })
    await sleep(300)
    const published = await zbc.publishMessage({
      name: 'compat-paid',
      correlationKey: 'order-node-1',
      messageId: 'payment-node-1',
      timeToLive: 60000,
      variables: { paid: 100 },
    })
    expect(BigInt(published.key) > 0n, `message key ${published.key}`)
    const result = await waiting
    expectEq(result.variables.paid, 100, 'message variable in the instance')
    await expectCode(
      Code.ALREADY_EXISTS,
      zbc.publishMessage({
        name: 'compat-paid',
        correlationKey: 'order-node-1',
        messageId: 'payment-node-1',
        timeToLive: 60000,
        variables: {},
      }),
      'publishing the same message id again'
    )
  })

  await check('publish message: a non-ASCII correlation key correlates', async () => {
    // The gateway routes a message by a hash of its correlation key's UTF-8 bytes; the
    // subscription must be on the partition the message goes to.
    for (const key of ['Bestellung-ä-1', '注文-2', 'zamówienie-ś-3']) {
      const waiting = zbc.createProcessInstanceWithResult({
        bpmnProcessId: 'compat-message',
        variables: { orderId: key },
      })
      await sleep(200)
      await zbc.publishMessage({
        name: 'compat-paid',
        correlationKey: key,
        timeToLive: 60000,
        variables: { paidFor: key },
      })
      expectEq((await waiting).variables.paidFor, key, `message correlated by ${key}`)
    }
  })

  await check('publish message: no name is INVALID_ARGUMENT', async () => {
    await expectCode(
      Code.INVALID_ARGUMENT,
      zbc.publishMessage({ name: '', correlationKey: 'k', timeToLive: 0, variables: {} }),
      'publishing a message without a name'
    )
  })

  await check('broadcast signal: caught by a waiting instance, with its variables', async () => {
    let result = null
    const waiting = zbc
      .createProcessInstanceWithResult({ bpmnProcessId: 'compat-signal', variables: {} })
      .then((r) => (result = r))
    // Signals are not buffered: broadcast until the waiting instance has caught one.
    while (result === null) {
      const broadcast = await zbc.broadcastSignal({
        signalName: 'compat-go',
        variables: { signalled: 'yes' },
      })
      expect(BigInt(broadcast.key) > 0n, `signal key ${broadcast.key}`)
      await Promise.race([waiting, sleep(300)])
    }
    expectEq(result.variables.signalled, 'yes', 'signal variable in the instance')
  })

  // ---- decisions ---------------------------------------------------------------------------
  await check('evaluate decision: by id and by key', async () => {
    const evaluated = await zbc.evaluateDecision({
      decisionId: 'compat-discount',
      variables: { tier: 'gold' },
    })
    expectEq(JSON.parse(evaluated.decisionOutput), 0.2, 'output for gold')
    expectEq(evaluated.decisionId, 'compat-discount', 'decision id')
    expectEq(evaluated.decisionVersion, 1, 'decision version')
    expectEq(evaluated.decisionKey, deployed['compat-discount'].decisionKey, 'decision key')
    expectEq(evaluated.failedDecisionId, '', 'failed decision id')
    expectEq(evaluated.evaluatedDecisions.length, 1, 'evaluated decisions')
    expectEq(
      evaluated.evaluatedDecisions[0].matchedRules.map((r) => r.ruleId),
      ['gold'],
      'matched rules'
    )
    const byKey = await zbc.evaluateDecision({
      decisionKey: deployed['compat-discount'].decisionKey,
      variables: { tier: 'silver' },
    })
    expectEq(JSON.parse(byKey.decisionOutput), 0.1, 'output for silver (by key)')
  })

  await check('evaluate decision: unknown decision is NOT_FOUND', async () => {
    await expectCode(
      Code.NOT_FOUND,
      zbc.evaluateDecision({ decisionId: 'no-such-decision', variables: {} }),
      'evaluating an unknown decision'
    )
  })

  // ---- operations on instances and resources ----------------------------------------------
  await check('modify instance: a task activated again with local variables, the old one terminated', async () => {
    const created = await zbc.createProcessInstance({
      bpmnProcessId: 'compat-task',
      variables: { jobType: 'compat-modify-a', retries: 1 },
    })
    const [old] = await activate('compat-modify-a', 10000)
    expect(old, 'the first job')
    await zbc.modifyProcessInstance({
      processInstanceKey: created.processInstanceKey,
      activateInstructions: [
        {
          elementId: 'work',
          ancestorElementInstanceKey: '-1',
          variableInstructions: [{ scopeId: 'work', variables: { jobType: 'compat-modify-b' } }],
        },
      ],
      terminateInstructions: [{ elementInstanceKey: old.elementInstanceKey }],
    })
    const [moved] = await activate('compat-modify-b', 10000)
    expect(moved, 'a job of the activated task')
    expectEq(moved.processInstanceKey, created.processInstanceKey, 'instance of the new job')
    await expectCode(
      Code.NOT_FOUND,
      zbc.completeJob({ jobKey: old.key, variables: {} }),
      'completing the job of the terminated task'
    )
    const error = await expectCode(
      Code.INVALID_ARGUMENT,
      noRetry.modifyProcessInstance({
        processInstanceKey: created.processInstanceKey,
        activateInstructions: [
          { elementId: 'no-such-element', ancestorElementInstanceKey: '-1', variableInstructions: [] },
        ],
      }),
      'activating an unknown element'
    )
    expect(error.details.includes("'no-such-element'"), `message names the element: ${error.details}`)
    await zbc.completeJob({ jobKey: moved.key, variables: {} })
  })

  await check('delete resource: a deployed process, then NOT_FOUND', async () => {
    const xml = fs
      .readFileSync(path.join(MODELS, 'task.bpmn'), 'utf8')
      .replaceAll('compat-task', 'compat-deleted')
    const response = await zbc.deployResource({ name: 'deleted.bpmn', process: Buffer.from(xml) })
    const key = response.deployments[0].process.processDefinitionKey
    await zbc.deleteResource({ resourceKey: key })
    await expectCode(
      Code.NOT_FOUND,
      noRetry.deleteResource({ resourceKey: key }),
      'deleting it again'
    )
    await expectCode(
      Code.NOT_FOUND,
      noRetry.createProcessInstance({ bpmnProcessId: 'compat-deleted', variables: {} }),
      'creating an instance of the deleted process'
    )
  })

  // ---- what Beeline does not implement yet -------------------------------------------------
  for (const [name, call] of [
    [
      'migrateProcessInstance',
      () =>
        noRetry.migrateProcessInstance({
          processInstanceKey: '2251799813685249',
          migrationPlan: { targetProcessDefinitionKey: '2251799813685250', mappingInstructions: [] },
        }),
    ],
  ]) {
    try {
      await call()
      console.log(`skip  ${name}: not checked (it answered without an error)`)
    } catch (error) {
      console.log(`skip  ${name}: not checked, Beeline answers ${describe(error)}`)
    }
  }

  // ---- shutdown ----------------------------------------------------------------------------
  await check('workers and clients close cleanly', async () => {
    await Promise.all(workers.map((w) => w.close()))
    await zbc.close()
    await noRetry.close()
  })

  if (failures.length > 0) {
    console.log(`${failures.length} Node SDK check(s) failed`)
    return 1
  }
  return 0
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.log(`FAIL  ${describe(error)}`)
    process.exit(1)
  }
)
