//! The C `main` of a built program: for an executable it calls the program's `main` and
//! returns its status; for the test runner it asks the runtime which test its first argument
//! names and calls that one test. `cairn emit` builds neither.
//!
//! Invariant: the C `main` is the only function the module defines with external linkage;
//! every program function is internal, so the pipeline may inline it into `main`.

use inkwell::basic_block::BasicBlock;
use inkwell::module::Linkage;
use inkwell::values::{FunctionValue, ValueKind};

use crate::Entry;
use crate::module::{G, ModuleGen};

impl<'ctx> ModuleGen<'ctx, '_> {
    /// The C `main`: runs the program's `main`, or the test named by the first argument.
    pub(crate) fn entry(&mut self, entry: &Entry) -> G<()> {
        let i32t = self.ctx.i32_type();
        match entry {
            Entry::None => Ok(()),
            Entry::Main(symbol) => {
                self.start_main();
                let target = self.functions[symbol];
                let call = self.builder.build_call(target, &[], "status")?;
                let status = match call.try_as_basic_value() {
                    ValueKind::Basic(value) => value.into_int_value(),
                    _ => i32t.const_zero(),
                };
                self.builder.build_return(Some(&status))?;
                Ok(())
            }
            Entry::Tests(symbols) => {
                let (main, block) = self.start_main();
                let argc = main.get_nth_param(0).expect("argc").into();
                let argv = main.get_nth_param(1).expect("argv").into();
                let count = self.ctx.i64_type().const_int(symbols.len() as u64, false).into();
                let index = self.builder.build_call(self.rt("cairn_rt_test_index"), &[argc, argv, count], "index")?;
                let ValueKind::Basic(index) = index.try_as_basic_value() else { unreachable!("an i64 result") };
                let done = self.ctx.append_basic_block(main, "done");
                let mut cases = Vec::new();
                for (i, symbol) in symbols.iter().enumerate() {
                    let case = self.ctx.append_basic_block(main, "test");
                    self.builder.position_at_end(case);
                    self.builder.build_call(self.functions[symbol], &[], "")?;
                    self.builder.build_unconditional_branch(done)?;
                    cases.push((self.ctx.i64_type().const_int(i as u64, false), case));
                }
                self.builder.position_at_end(block);
                self.builder.build_switch(index.into_int_value(), done, &cases)?;
                self.builder.position_at_end(done);
                self.builder.build_return(Some(&i32t.const_zero()))?;
                Ok(())
            }
        }
    }

    /// `int main(int, char **)` with its entry block, the builder positioned in it.
    fn start_main(&mut self) -> (FunctionValue<'ctx>, BasicBlock<'ctx>) {
        let i32t = self.ctx.i32_type();
        let fn_type = i32t.fn_type(&[i32t.into(), self.ptr().into()], false);
        let main = self.module.add_function("main", fn_type, Some(Linkage::External));
        let block = self.ctx.append_basic_block(main, "entry");
        self.builder.position_at_end(block);
        self.debug_entry(main);
        (main, block)
    }
}
