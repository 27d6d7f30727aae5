// Prints one plain closing line, `N passed, N failed, N skipped`, that CI tooling of any language can read.
export default class SummaryReporter {
  onRunComplete(_contexts, results) {
    const line = `${results.numPassedTests} passed, ${results.numFailedTests} failed, ${results.numPendingTests + results.numTodoTests} skipped`;
    process.stderr.write(`\ntests: ${line}\n`);
  }
}
