"""stepscope.plan and plan_search from Python: the CLI's predictions, its
refusals as OptionError naming the keyword, and the tables."""

import json
import os
import subprocess
import tempfile
import unittest

import stepscope
from stepscope_testing import cli


def cli_json(*args):
    out = subprocess.run([cli(), "plan", *args, "--json", "-"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


class PlanTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # GPT-3 175B as Megatron trained it on A100s (the public validation file's layout).
        cls.report = stepscope.plan("gpt3-175b", gpu="a100-80-sxm", tp=8, pp=8, dp=16, micro_batch=1,
                                    global_batch=1536, recompute="full", sharding="zero1", sequence_parallel=True)

    @unittest.skipUnless(cli(), "no stepscope CLI to compare with")
    def test_same_prediction_as_the_cli(self):
        expected = cli_json("--model", "gpt3-175b", "--gpu", "a100-80-sxm", "--tp", "8", "--pp", "8", "--dp", "16",
                            "--global-batch", "1536", "--recompute", "full", "--sharding", "zero1",
                            "--sequence-parallel")
        self.assertEqual(self.report.to_dict(), expected)

    @unittest.skipUnless(cli(), "no stepscope CLI to compare with")
    def test_text_is_the_clis(self):
        out = subprocess.run([cli(), "plan", "--model", "gpt3-1.3b", "--dp", "8", "--explain"], check=True,
                             capture_output=True, text=True).stdout
        self.assertEqual(stepscope.plan("gpt3-1.3b", dp=8).to_text(explain=True), out)

    @unittest.skipUnless(cli(), "no stepscope CLI to compare with")
    def test_moe_graph_and_fp8_settings_are_the_clis(self):
        with tempfile.TemporaryDirectory() as d:
            model = os.path.join(d, "moe.json")
            with open(model, "w") as f:
                json.dump({"layers": 4, "hidden": 2048, "heads": 16, "vocab": 32000, "seq": 2048, "ffn_hidden": 5632,
                           "gated_mlp": True, "moe_experts": 8, "moe_topk": 2, "moe_ffn_hidden": 1408,
                           "moe_shared_ffn": 2816}, f)
            got = stepscope.plan(model, dp=8, ep=4, moe_capacity_factor=1.25, moe_pad_to_capacity=True,
                                 cuda_graphs=True, dtype="fp8", stack="pytorch", fp8_impl="te",
                                 sharding="fsdp", fsdp_flat_params=True).to_dict()
            expected = cli_json("--model", model, "--dp", "8", "--ep", "4", "--moe-capacity-factor", "1.25",
                                "--moe-pad-to-capacity", "--cuda-graphs", "--dtype", "fp8", "--stack", "pytorch",
                                "--fp8-impl", "te", "--sharding", "fsdp", "--fsdp-flat-params")
        self.assertEqual(got, expected)
        self.assertEqual(got["settings"]["moe_capacity_factor"], 1.25)
        self.assertEqual(got["settings"]["fp8_casts"], "fused")
        self.assertTrue(got["settings"]["cuda_graphs"])
        split = stepscope.plan("llama3-405b", tp=8, pp=8, dp=2, global_batch=32, account_for_embedding=True,
                               account_for_loss=True).to_dict()
        self.assertEqual(split, cli_json("--model", "llama3-405b", "--tp", "8", "--pp", "8", "--dp", "2",
                                         "--global-batch", "32", "--account-for-embedding", "--account-for-loss"))

    def test_defaults_follow_the_layout(self):
        d = stepscope.plan("gpt3-1.3b", dp=4, micro_batch=2).to_dict()
        self.assertEqual(d["cluster"]["gpus"], 4)
        self.assertEqual(d["settings"]["global_batch"], 8)

    def test_memory_table_adds_up_to_the_total(self):
        t = self.report.memory
        self.assertEqual([r["part"] for r in t], ["weights", "gradients", "optimizer", "activations", "temporary"])
        self.assertAlmostEqual(sum(r["bytes"] for r in t) / 1e9, self.report.memory_gb, places=6)
        self.assertAlmostEqual(sum(r["share"] for r in t), 1.0, places=9)

    def test_headline_figures(self):
        d = self.report.to_dict()
        self.assertTrue(self.report.fits)
        self.assertEqual(self.report.step_seconds, d["step_seconds"]["total"])
        self.assertGreater(self.report.mfu, 0.2)
        self.assertLess(self.report.mfu, 0.8)
        step = {r["part"]: r["seconds"] for r in self.report.step}
        self.assertGreater(step["recompute"], 0)  # full recomputation costs a forward
        self.assertIn("fits", repr(self.report))

    @unittest.skipUnless(cli(), "no stepscope CLI to compare with")
    def test_pytorch_stack_moe_and_stage_keywords_are_the_clis(self):
        with tempfile.TemporaryDirectory() as tmp:
            model = os.path.join(tmp, "moe.json")
            with open(model, "w") as f:
                json.dump({"name": "moe", "layers": 8, "hidden": 1024, "heads": 16, "kv_heads": 4,
                           "ffn_hidden": 2816, "gated_mlp": True, "vocab": 32000, "seq": 2048,
                           "moe_experts": 8, "moe_topk": 2}, f)
            report = stepscope.plan(model, gpu="h200-sxm", dp=8, pp=2, ep=4, micro_batch=1, global_batch=32,
                                    stack="pytorch", sharding="fsdp", recompute="full", recompute_layers=2,
                                    first_stage_layers=3, last_stage_layers=5)
            expected = cli_json("--model", model, "--gpu", "h200-sxm", "--dp", "8", "--pp", "2", "--ep", "4",
                                "--global-batch", "32", "--stack", "pytorch", "--sharding", "fsdp",
                                "--recompute", "full", "--recompute-layers", "2", "--first-stage-layers", "3",
                                "--last-stage-layers", "5")
        self.assertEqual(report.to_dict(), expected)
        d = report.to_dict()
        self.assertEqual(d["settings"]["stack"], "pytorch")
        self.assertEqual(d["parallel"]["ep"], 4)
        self.assertGreater(d["step_seconds"]["ep_comm"], 0)
        self.assertGreater(report.reserved_gb, report.memory_gb)  # the allocator's reserve

    def test_a_layout_that_does_not_fit_says_so_and_names_what_would(self):
        r = stepscope.plan("llama3-8b", gpu="h100-sxm", gpus=8, micro_batch=2, global_batch=64)
        self.assertFalse(r.fits)
        self.assertIn("DOES NOT FIT", r.to_text())
        self.assertGreater(len(r.alternatives), 0)
        first = r.alternatives[0]
        again = stepscope.plan("llama3-8b", gpu="h100-sxm", global_batch=64, tp=first["tp"], pp=first["pp"],
                               dp=first["dp"], cp=first["cp"], micro_batch=first["micro_batch"],
                               recompute=first["recompute"], sharding=first["sharding"])
        self.assertTrue(again.fits)
        self.assertAlmostEqual(again.step_seconds, first["step_seconds"], places=9)
        self.assertEqual(len(self.report.alternatives), 0)  # the report that fits lists none

    def test_gpus_alone_and_seq(self):
        r = stepscope.plan("llama3-8b", gpus=8, tp=2, seq=4096, sharding="zero3")
        d = r.to_dict()
        self.assertEqual((d["parallel"]["dp"], d["model"]["seq"]), (4, 4096))
        self.assertEqual(r.notes, ["dp 4 fills the 8 GPUs (tp × pp × cp = 2); give dp to set it"])

    def test_notebook_view_is_the_text(self):
        self.assertIn("memory per GPU", self.report._repr_html_())
        self.assertTrue(self.report._repr_html_().startswith("<pre>"))


class PlanSearchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.search = stepscope.plan_search("llama3-8b", 8, global_batch=64, gpu="h100-sxm", top=5)

    @unittest.skipUnless(cli(), "no stepscope CLI to compare with")
    def test_same_layouts_as_the_cli(self):
        expected = cli_json("search", "--model", "llama3-8b", "--gpus", "8", "--global-batch", "64", "--top", "5")
        got = self.search.to_dict()
        for doc in (expected, got):
            doc.pop("search_seconds")
        self.assertEqual(got, expected)

    def test_top_is_fastest_first_and_fits(self):
        rows = self.search.top.rows
        self.assertEqual(len(rows), 5)
        steps = [r["step_seconds"] for r in rows]
        self.assertEqual(steps, sorted(steps))
        for r in rows:
            self.assertEqual(r["tp"] * r["pp"] * r["dp"] * r["cp"], 8)
            self.assertLessEqual(r["memory_bytes"], 80e9)
        self.assertEqual(self.search.best, rows[0])
        self.assertGreaterEqual(self.search.candidates, self.search.fitting)
        self.assertGreater(self.search.fitting, 0)

    def test_the_best_layout_planned_alone_gives_the_same_step(self):
        b = self.search.best
        r = stepscope.plan("llama3-8b", gpu="h100-sxm", tp=b["tp"], pp=b["pp"], dp=b["dp"], cp=b["cp"], vpp=b["vpp"],
                           micro_batch=b["micro_batch"], global_batch=64, recompute=b["recompute"],
                           sharding=b["sharding"], sequence_parallel=b["sequence_parallel"],
                           cpu_offload=b["cpu_offload"])
        self.assertAlmostEqual(r.step_seconds, b["step_seconds"], places=9)
        self.assertAlmostEqual(r.memory_gb * 1e9, b["memory_bytes"], delta=1.0)

    def test_default_global_batch_is_said(self):
        s = stepscope.plan_search("llama3-8b", 8, top=1)
        self.assertEqual(s.to_dict()["global_batch"], 512)
        self.assertEqual(len(s.notes), 1)

    def test_nothing_fits_is_an_answer_not_an_error(self):
        s = stepscope.plan_search("gpt3-175b", 1, global_batch=8, gpu="a100-40-sxm", top=3)
        self.assertIsNone(s.best)
        self.assertEqual(s.fitting, 0)
        self.assertIn("no layout fits", s.to_text())


class PlanRefusalTest(unittest.TestCase):
    def refused(self, fn, *args, **kw):
        with self.assertRaises(stepscope.OptionError) as ctx:
            fn(*args, **kw)
        return ctx.exception

    def test_unknown_gpu_names_the_keyword_and_the_closest(self):
        e = self.refused(stepscope.plan, "gpt3-1.3b", gpu="h10o")
        self.assertEqual(e.message, 'gpu: unknown GPU "h10o" (closest: h100-sxm, h100-nvl, h100-pcie)')
        self.assertIsInstance(e, ValueError)
        e = self.refused(stepscope.plan, "gpt3-1.3b", gpu="v100")
        self.assertTrue(e.message.startswith("gpu: NVIDIA V100 SXM2 is in the GPU table, but the planner has no "
                                             "sourced achievable rates"), e.message)

    def test_sizes_out_of_range(self):
        self.assertEqual(self.refused(stepscope.plan, "gpt3-1.3b", tp=0).message,
                         "tp: expected a whole number from 1 to 1048576, got 0")
        self.assertTrue(self.refused(stepscope.plan, "gpt3-1.3b", tp=1024, pp=1024, dp=1024)
                        .message.startswith("tp/pp/dp/cp: tp × pp × dp × cp = 1073741824 GPUs"))
        self.assertTrue(self.refused(stepscope.plan, "gpt3-1.3b", micro_batch=-2).message.startswith("micro_batch:"))
        self.assertTrue(self.refused(stepscope.plan_search, "gpt3-1.3b", 0, global_batch=8).message.startswith("gpus:"))
        self.assertTrue(self.refused(stepscope.plan_search, "gpt3-1.3b", 8, global_batch=8, top=0)
                        .message.startswith("top:"))

    def test_words_the_planner_does_not_know(self):
        self.assertEqual(self.refused(stepscope.plan, "gpt3-1.3b", sharding="zero4").message,
                         "sharding: expected ddp, zero1, zero2, zero3, fsdp, fsdp_hybrid, hsdp or distributed_optimizer")
        self.assertEqual(self.refused(stepscope.plan, "gpt3-1.3b", dtype="fp4").message,
                         "dtype: expected bf16, fp16, fp8, mxfp8 or nvfp4")
        self.assertEqual(self.refused(stepscope.plan, "gpt3-1.3b", recompute="some").message,
                         "recompute: expected none, selective, full or op")
        self.assertEqual(self.refused(stepscope.plan, "gpt5").message, 'model: "gpt5" is neither a preset nor a file')

    def test_values_the_native_fields_cannot_hold_name_the_keyword(self):
        self.assertEqual(self.refused(stepscope.plan, "gpt3-1.3b", tp=2**40).message,
                         "tp: expected a whole number that fits 32 bits, got 1099511627776")
        self.assertEqual(self.refused(stepscope.plan, "gpt3-1.3b", sharding=3).message,
                         "sharding: expected a string, got 3")

    def test_control_characters_from_the_input_are_escaped(self):
        e = self.refused(stepscope.plan, "gpt3-1.3b", gpu="\x1b[2Jh100")
        self.assertTrue(e.message.startswith('gpu: unknown GPU "\\x1b[2Jh100"'), e.message)

    def test_seq_out_of_range(self):
        self.assertTrue(self.refused(stepscope.plan, "gpt3-1.3b", seq=-1).message.startswith("seq: expected"))

    def test_impossible_layout_names_the_constraint(self):
        e = self.refused(stepscope.plan, "gpt3-175b", tp=5)
        self.assertTrue(e.message.startswith("invalid configuration: heads (96) not divisible by tp (5)"), e.message)

    def test_a_damaged_model_file_names_the_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "model.json")
            with open(path, "w") as f:
                f.write('{"name": "m", "layers": 2,')
            e = self.refused(stepscope.plan, path)
            self.assertEqual(e.path, path)
            self.assertIn(path, e.message)


if __name__ == "__main__":
    unittest.main()
