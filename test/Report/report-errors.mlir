// RUN: not zero-opt %s --zero-report=format=xml 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not zero-opt %s --zero-report=output=/nonexistent/dir/report.txt 2>&1 | FileCheck %s --check-prefix=OUTPUT

// FORMAT: for the --format option: Cannot find option named 'xml'!
// OUTPUT: error: zero-report: cannot open output file '/nonexistent/dir/report.txt'
func.func @f() {
  return
}
