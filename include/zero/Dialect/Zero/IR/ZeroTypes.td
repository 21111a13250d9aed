//===- ZeroTypes.td - zero types ---------------------------*- tablegen -*-===//

#ifndef ZERO_DIALECT_ZERO_IR_ZEROTYPES_TD
#define ZERO_DIALECT_ZERO_IR_ZEROTYPES_TD

include "zero/Dialect/Zero/IR/ZeroDialect.td"
include "mlir/IR/BuiltinTypes.td"

def Zero_FutureType : Zero_Type<"Future", "future"> {
  let summary = "The pending result of an asynchronous collective";
  let description = [{
    `!zero.future<T>` is the result of `zero.async`: a collective that has been
    started and whose value of type `T` becomes available at `zero.await`.
    A future is awaited exactly where its value is needed. An `scf.for` may
    carry it round its back edge (started at the end of one iteration,
    awaited in the next); it is not stored, passed to a function, or
    returned.

    ```mlir
    %f = zero.async : !zero.future<tensor<1024xf32>> {
      %r = zero.all_reduce %g on @dp reduce = sum : tensor<1024xf32>
      zero.yield %r : tensor<1024xf32>
    }
    %v = zero.await %f reads %g : !zero.future<tensor<1024xf32>>, tensor<1024xf32>
    ```
  }];
  let parameters = (ins "::mlir::Type":$valueType);
  let assemblyFormat = "`<` $valueType `>`";
  let genVerifyDecl = 1;
}

def Zero_RequestType : Zero_Type<"Request", "request"> {
  let summary = "A started buffer collective";
  let description = [{
    `!zero.request` is returned by a buffer collective that only starts (see
    `zero.reduce_scatter_buffer`) and consumed by the one `zero.wait` that
    completes it. `zero-lower-to-runtime` makes it the runtime's
    `zero_handle *`.
  }];
}

#endif // ZERO_DIALECT_ZERO_IR_ZEROTYPES_TD
