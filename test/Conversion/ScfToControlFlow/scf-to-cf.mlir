// zero-scf-to-cf: scf lowered as convert-scf-to-cf lowers it, after each
// function block is split behind every scf op (last first) and the entry
// block's ops are moved into a block of their own, so that neither this
// conversion nor the signature conversions after it renumber long blocks.

// RUN: zero-opt %s --split-input-file --zero-scf-to-cf | FileCheck %s

// Two loops with work between them: the entry block keeps only a branch,
// each loop lowers to its header, body and exit blocks, and the ops after
// each loop are in a block of their own.
// CHECK-LABEL: func.func @two_loops
// CHECK-SAME: (%[[BUF:.*]]: memref<4xf32>, %[[N:.*]]: index)
// CHECK-NEXT: cf.br ^[[BODY:.*]]
// CHECK: ^[[BODY]]:
// CHECK: cf.br ^[[HEADER1:bb[0-9]+]]
// CHECK: ^[[HEADER1]](%{{.*}}: index):
// CHECK: cf.cond_br
// CHECK: memref.store
// CHECK: memref.load %[[BUF]]
// CHECK: ^[[HEADER2:bb[0-9]+]](%{{.*}}: index):
// CHECK: cf.cond_br
// CHECK: return
// CHECK-NOT: scf.
func.func @two_loops(%buf: memref<4xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    memref.store %one, %buf[%i] : memref<4xf32>
  }
  %x = memref.load %buf[%c0] : memref<4xf32>
  scf.for %i = %c0 to %n step %c1 {
    memref.store %x, %buf[%i] : memref<4xf32>
  }
  %y = memref.load %buf[%c1] : memref<4xf32>
  return %y : f32
}

// -----

// A function without arguments keeps its entry block; one with only a
// return has nothing to split; a declaration has no body.
// CHECK-LABEL: func.func @no_arguments
// CHECK-NEXT: arith.constant
// CHECK-LABEL: func.func @only_return
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @declared
func.func @no_arguments() -> index {
  %c0 = arith.constant 0 : index
  return %c0 : index
}
func.func @only_return(%x: index) {
  return
}
func.func private @declared(%x: index)

// -----

// A loop whose body holds scf ops (a training loop's step, with a check's
// scf.if): the loop is lowered first, then its body's blocks are split
// behind each scf.if, and the ifs are lowered in the next round. The ops
// after each if stay in order in blocks of their own.
// CHECK-LABEL: func.func @ifs_in_a_loop
// CHECK: ^[[HEADER:bb[0-9]+]](%[[I:.*]]: index):
// CHECK: cf.cond_br %{{.*}}, ^[[BODY:bb[0-9]+]], ^[[EXIT:bb[0-9]+]]
// CHECK: ^[[BODY]]:
// CHECK: cf.cond_br %{{.*}}, ^[[THEN1:bb[0-9]+]], ^[[AFTER1:bb[0-9]+]]
// CHECK: ^[[THEN1]]:
// CHECK: call @check
// CHECK: ^[[AFTER1]]:
// CHECK: memref.store
// CHECK: cf.cond_br %{{.*}}, ^[[THEN2:bb[0-9]+]], ^[[AFTER2:bb[0-9]+]]
// CHECK: ^[[THEN2]]:
// CHECK: call @check
// CHECK: ^[[AFTER2]]:
// CHECK: memref.load
// CHECK: cf.br ^[[HEADER]]
// CHECK: ^[[EXIT]]:
// CHECK-NEXT: return
// CHECK-NOT: scf.
func.func private @check()
func.func @ifs_in_a_loop(%buf: memref<4xf32>, %n: index, %c: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    scf.if %c {
      func.call @check() : () -> ()
    }
    memref.store %one, %buf[%i] : memref<4xf32>
    scf.if %c {
      func.call @check() : () -> ()
    }
    %x = memref.load %buf[%i] : memref<4xf32>
  }
  return
}
