// A Jest reporter (CommonJS: Jest loads reporters untransformed). Jest's own summary only counts
// skipped tests; this prints each one as a plain line at the end of the run, so that a file skipped
// for a missing requirement (test/support/requirements.ts) says why and how to run it.
const path = require('node:path');

class SkipReporter {
  onRunComplete(_contexts, results) {
    for (const file of results.testResults) {
      const where = path.relative(process.cwd(), file.testFilePath);
      for (const test of file.testResults) {
        if (test.status === 'pending') process.stderr.write(`skipped ${where}: ${test.fullName}\n`);
      }
    }
  }
}

module.exports = SkipReporter;
