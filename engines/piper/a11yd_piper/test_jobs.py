# SPDX-License-Identifier: GPL-3.0-or-later
"""A job ends exactly once: started by the synthesis thread, or ended unstarted by a cancel, never both."""

import unittest

from .jobs import Cancelled, Job


class JobTests(unittest.TestCase):
    def test_a_job_started_cannot_be_ended_unstarted(self):
        job = Job(1, None)
        self.assertTrue(job.start())
        self.assertFalse(job.end_unstarted())
        self.assertEqual(job.stage, Job.STARTED)

    def test_a_job_ended_unstarted_never_starts(self):
        job = Job(2, None)
        self.assertTrue(job.end_unstarted())
        self.assertFalse(job.end_unstarted(), "its one end was sent already")
        self.assertFalse(job.start())
        self.assertEqual(job.stage, Job.ENDED)

    def test_a_cancel_is_seen_between_pieces_of_work_and_stops_a_run(self):
        class Options:
            terminate = False

        job = Job(3, None)
        job.check()
        job.run_options = Options()
        job.cancel()
        self.assertTrue(job.run_options.terminate)
        with self.assertRaises(Cancelled):
            job.check()


if __name__ == "__main__":
    unittest.main()
