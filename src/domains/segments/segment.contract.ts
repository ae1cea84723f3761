// Segment operations.
import { z } from 'zod';
import { listEnvelope, Uuid } from '../../contract/common.schemas.js';
import { defineOperation } from '../../contract/operation.js';
import { CreateSegmentBody, ListSegmentsQuery, Segment, SegmentMember, SegmentMembersBody, UpdateSegmentBody } from './segment.schemas.js';

const tags = ['Segments'];
const params = z.object({ id: Uuid });

export const segmentContract = {
  createSegment: defineOperation({
    name: 'segments.create',
    method: 'post',
    path: '/segments',
    scope: 'segments:write',
    summary: 'Create a segment',
    description:
      'STATIC: a list of customers (optionally `customerIds` at once). AUTO: `conditions` over customer fields; every customer ' +
      'they hold for is a member, now and after each customer write. Each member entering records `customer.segment.entered`.',
    tags,
    body: CreateSegmentBody,
    output: Segment,
    successStatus: 201,
  }),
  getSegment: defineOperation({
    name: 'segments.get',
    method: 'get',
    path: '/segments/{id}',
    scope: 'segments:read',
    summary: 'Get a segment with its size',
    tags,
    params,
    output: Segment,
  }),
  listSegments: defineOperation({
    name: 'segments.list',
    method: 'get',
    path: '/segments',
    scope: 'segments:read',
    summary: 'List segments, newest first',
    tags,
    query: ListSegmentsQuery,
    output: listEnvelope(Segment, 'SegmentList'),
  }),
  updateSegment: defineOperation({
    name: 'segments.update',
    method: 'patch',
    path: '/segments/{id}',
    scope: 'segments:write',
    summary: 'Rename a segment, or change the conditions of an AUTO segment',
    description: 'New conditions compute the members again: customers enter and leave, with their events.',
    tags,
    params,
    body: UpdateSegmentBody,
    output: Segment,
  }),
  deleteSegment: defineOperation({
    name: 'segments.delete',
    method: 'delete',
    path: '/segments/{id}',
    scope: 'segments:write',
    summary: 'Delete a segment',
    description: 'Each member leaves it (`customer.segment.left`).',
    tags,
    params,
  }),
  addMembers: defineOperation({
    name: 'segments.addMembers',
    method: 'post',
    path: '/segments/{id}/members',
    scope: 'segments:write',
    summary: 'Add customers to a STATIC segment',
    description: 'Customers already in stay as they are. Unknown customer ids are a 400 naming them; an AUTO segment is a 409.',
    tags,
    params,
    body: SegmentMembersBody,
    output: Segment,
  }),
  removeMembers: defineOperation({
    name: 'segments.removeMembers',
    method: 'post',
    path: '/segments/{id}/members/remove',
    scope: 'segments:write',
    summary: 'Remove customers from a STATIC segment',
    description: 'Ids that are not members are ignored; an AUTO segment is a 409.',
    tags,
    params,
    body: SegmentMembersBody,
    output: Segment,
  }),
  listMembers: defineOperation({
    name: 'segments.listMembers',
    method: 'get',
    path: '/segments/{id}/members',
    scope: 'segments:read',
    summary: 'List the members of a segment, latest to enter first',
    tags,
    params,
    query: ListSegmentsQuery,
    output: listEnvelope(SegmentMember, 'SegmentMemberList'),
  }),
};
